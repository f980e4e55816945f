#pragma once
// msgpack bytes straight to JSON text, with no tree in between: the output of
// `salttap replay --output events`.
//
// The JSON is byte for byte what event_to_json.h renders from the decoded
// Event (same handling of bin, ext 78 / 79, invalid UTF-8, non-string keys,
// NaN), and the input is checked exactly as build_tree (msgpack_tree.h)
// checks it: the same limits, the same status and stop offset on bad input,
// so the decoder counts the same errors either way. A differential test and
// a fuzz target (tests/fuzz/json_transcoder_fuzz.cpp) hold the two equal.

#include <cstddef>
#include <string>
#include <string_view>

#include <msgpack.hpp>

#include "tap/decode_limits.h"
#include "tap/msgpack_tree.h"

namespace salttap::tap {

// Appends the JSON of the msgpack value at bytes[offset] to `out`. On any
// status but ok, `out` is left as it was.
[[nodiscard]] TreeResult transcode_msgpack_json(std::string_view bytes, std::size_t offset, const DecodeLimits& limits,
                                                std::string& out);

// Appends {"tag":...,"data":...} (no newline) for the data at body[offset];
// `out` is left as it was unless the status is ok.
[[nodiscard]] TreeResult transcode_event_json(std::string_view tag, std::string_view body, std::size_t offset,
                                              const DecodeLimits& limits, std::string& out);

// The same JSON from a decoded tree: what append_msgpack_json
// (event_to_json.h) writes, written here without RapidJSON's per-byte calls.
void append_msgpack_tree_json(std::string& out, const msgpack::object& value);

}  // namespace salttap::tap
