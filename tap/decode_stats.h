#pragma once
// Why a frame did not become an Event, and how often (docs/salt-event-bus.md
// §4): the public face of the event decoder, for captures and logs.
// Defined in internal/event_decoder.cpp.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace salttap::tap {

enum class DecodeError : std::uint8_t {
  frame_not_msgpack,  // the frame bytes do not parse
  frame_not_map,      // the frame is not a map
  no_body,            // the map has no "body"
  body_not_bytes,     // "body" is neither str nor bin
  no_separator,       // no "\n\n" after the tag
  data_not_msgpack,   // the data after the tag does not parse
  over_limit,         // a size, count or depth limit was exceeded
  count_,             // NOLINT(readability-identifier-naming): the number of reasons, not one of them
};
std::string_view to_string(DecodeError e);

struct DecodeStats {
  std::uint64_t events = 0;
  std::array<std::uint64_t, static_cast<std::size_t>(DecodeError::count_)> errors{};
  std::uint64_t total_errors() const;
};

}  // namespace salttap::tap
