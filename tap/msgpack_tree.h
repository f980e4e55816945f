#pragma once
// build_tree: one msgpack value -> a msgpack::object tree in a zone, with
// every str/bin/ext pointing into the input (zero copy).
//
// Why not msgpack::unpack: it allocates its parser and visitor stacks on
// every call (four mallocs per event with the outer frame and inner data) and
// dispatches every string through a callback; on small test.ping returns that
// made it the slowest part of the tap (profiled in bench/decode_bench.cpp,
// where msgpack-c's unpacker remains the baseline). The objects built here are
// msgpack-c's own types, so everything downstream (msgpack::object
// comparisons, packer, adaptors) works unchanged; a differential test checks
// the trees against msgpack::unpack on every capture.

#include <cstddef>
#include <string_view>

#include <msgpack.hpp>

#include "tap/decode_limits.h"

namespace salttap::tap {

enum class TreeStatus { ok, truncated, invalid, over_limit };

struct TreeResult {
  TreeStatus status;
  std::size_t end;  // offset just past the value (ok), or where parsing stopped
};

// Parses the value at bytes[offset]. The input must outlive the tree.
[[nodiscard]] TreeResult build_tree(msgpack::zone& zone, std::string_view bytes, std::size_t offset,
                                    const DecodeLimits& limits, msgpack::object& out);

}  // namespace salttap::tap
