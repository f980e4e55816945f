#pragma once
// The framing of a connection to the pub or pull socket, and what cutting a
// byte stream into frames counted (docs/salt-event-bus.md §3): the public
// face of the frame decoder, for the readers' stats, captures and firing.
// Defined in internal/frame_decoder.cpp.

#include <cstdint>
#include <string_view>

namespace salttap::tap {

// plain: msgpack maps back to back; len32: a 4-byte big-endian length before each map.
enum class Framing : std::uint8_t { unknown, plain, len32 };
std::string_view to_string(Framing f);

struct FrameStats {
  std::uint64_t bytes = 0;             // bytes fed
  std::uint64_t frames = 0;            // frames delivered
  std::uint64_t oversize_frames = 0;   // over max_frame_bytes, skipped
  std::uint64_t invalid_frames = 0;    // not msgpack, or over a structural limit
  std::uint64_t resyncs = 0;           // times the stream was re-found after bad bytes
  std::uint64_t skipped_bytes = 0;     // every byte not delivered in a frame
  std::uint64_t truncated_frames = 0;  // the stream ended inside a frame

  FrameStats& operator+=(const FrameStats& o);
};

}  // namespace salttap::tap
