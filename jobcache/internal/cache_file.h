#pragma once
// One file of the job cache written by salt.payload (`.load.p`,
// `.minions.p`, `return.p`, `out.p`): exactly one msgpack value, decoded with
// the tap's own tree builder (tap/msgpack_tree.h), so every variant the bus
// carries is read the same here: str and bin kept apart, Python 2's raw
// strings, ext types, integers up to uint64 (docs/salt-event-bus.md §8.1).
// Nothing throws; every failure says what and where.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <msgpack.hpp>

#include "tap/decode_limits.h"

namespace salttap::jobcache {

enum class CacheFileStatus : std::uint8_t {
  ok,
  empty,           // no bytes: created, not written yet
  truncated,       // the value ends early: being written (or cut)
  invalid,         // not msgpack
  over_limit,      // a size, count or depth limit was exceeded
  trailing_bytes,  // more after the value (Salt's reader refuses that too)
};
std::string_view to_string(CacheFileStatus s);

// "<file>: <why>" for a cache file that could not be read: the errno of
// CacheFilesystem::read_file (EFBIG: larger than the decode limit).
std::string read_error(const std::filesystem::path& file, int error);

struct CacheFileResult {
  CacheFileStatus status = CacheFileStatus::ok;
  std::size_t at = 0;  // where decoding stopped (not ok)
  bool ok() const { return status == CacheFileStatus::ok; }
  // Whether reading the file again later may succeed: a file read while
  // Salt writes it (`.load.p` before 3008 is written in place).
  bool may_be_mid_write() const {
    return status == CacheFileStatus::empty || status == CacheFileStatus::truncated ||
           status == CacheFileStatus::invalid || status == CacheFileStatus::trailing_bytes;
  }
  std::string describe() const;  // "truncated at byte 17"
};

// Decodes `bytes` into `out`, whose strings point into `bytes` (which must
// outlive it) and whose containers live in `zone`.
[[nodiscard]] CacheFileResult decode_cache_file(msgpack::zone& zone, std::string_view bytes,
                                                const tap::DecodeLimits& limits, msgpack::object& out);

}  // namespace salttap::jobcache
