#include "jobcache/internal/cache_file.h"

#include <cerrno>

#include <fmt/format.h>

#include "common/errno_text.h"

#include "tap/msgpack_tree.h"

namespace salttap::jobcache {

std::string_view to_string(CacheFileStatus s) {
  switch (s) {
    case CacheFileStatus::ok:
      return "ok";
    case CacheFileStatus::empty:
      return "empty";
    case CacheFileStatus::truncated:
      return "truncated";
    case CacheFileStatus::invalid:
      return "not msgpack";
    case CacheFileStatus::over_limit:
      return "over a decode limit";
    case CacheFileStatus::trailing_bytes:
      return "trailing bytes";
  }
  return "unknown";
}

std::string CacheFileResult::describe() const {
  switch (status) {
    case CacheFileStatus::ok:
    case CacheFileStatus::empty:
      return std::string(to_string(status));
    case CacheFileStatus::trailing_bytes:
      return fmt::format("trailing bytes after the value, from byte {}", at);
    case CacheFileStatus::truncated:
      return fmt::format("truncated at byte {}", at);
    case CacheFileStatus::invalid:
      return fmt::format("not msgpack: invalid byte at {}", at);
    case CacheFileStatus::over_limit:
      return fmt::format("over a decode limit at byte {}", at);
  }
  return "unknown";
}

CacheFileResult decode_cache_file(msgpack::zone& zone, std::string_view bytes, const tap::DecodeLimits& limits,
                                  msgpack::object& out) {
  if (bytes.empty()) return {CacheFileStatus::empty, 0};
  if (bytes.size() > limits.max_frame_bytes) return {CacheFileStatus::over_limit, 0};
  tap::TreeResult r{};
  try {
    r = tap::build_tree(zone, bytes, 0, limits, out);
  } catch (const std::bad_alloc&) {  // within the limits, and still too much for this host
    return {CacheFileStatus::over_limit, 0};
  }
  switch (r.status) {
    case tap::TreeStatus::ok:
      break;
    case tap::TreeStatus::truncated:
      return {CacheFileStatus::truncated, r.end};
    case tap::TreeStatus::invalid:
      return {CacheFileStatus::invalid, r.end};
    case tap::TreeStatus::over_limit:
      return {CacheFileStatus::over_limit, r.end};
  }
  if (r.end != bytes.size()) return {CacheFileStatus::trailing_bytes, r.end};
  return {CacheFileStatus::ok, r.end};
}

std::string read_error(const std::filesystem::path& file, int error) {
  return fmt::format("{}: {}", file.string(), error == EFBIG ? "larger than the decode limit" : errno_text(error));
}

}  // namespace salttap::jobcache
