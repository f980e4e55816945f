#pragma once
// EventDecoder turns one frame into an Event (docs/salt-event-bus.md §4):
//   frame = msgpack map {"head": {}, "body": <bin or str>}   (keys in any order)
//   body  = UTF-8 tag  "\n\n"  msgpack(data)
// It accepts every variant Salt has sent: raw or bin bodies, str or raw keys,
// invalid UTF-8, ext types 78/79, non-string map keys, integers up to uint64,
// and the pre-2015.5 20-character padded tag with no separator.
// Every failure is returned and counted; none throws.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tap/decode_limits.h"
#include "tap/decode_stats.h"
#include "tap/event.h"
#include "tap/internal/frame_decoder.h"
#include "tap/msgpack_tree.h"

namespace salttap::tap {

class EventDecoder {
 public:
  explicit EventDecoder(const DecodeLimits& limits = {});

  // One {"head","body"} frame, as delivered by FrameDecoder.
  [[nodiscard]] std::optional<Event> decode_frame(std::string_view frame);
  // The same, taking the frame's buffer instead of copying the frame.
  [[nodiscard]] std::optional<Event> decode_owned(OwnedFrame&& frame);
  // One bare event body: a ZeroMQ message on Salt 2015.x (era B).
  [[nodiscard]] std::optional<Event> decode_body(std::string_view body);

  const DecodeStats& stats() const { return stats_; }
  // Human-readable reason of the last failure, for logs.
  const std::string& last_error() const { return last_error_; }

 private:
  [[nodiscard]] std::optional<Event> decode_frame_unguarded(std::string_view frame);
  [[nodiscard]] std::optional<Event> decode_in_place(msgpack::zone& zone, const char* frame, std::size_t size);
  [[nodiscard]] std::optional<Event> decode_body_unguarded(std::string_view body);
  [[nodiscard]] std::optional<Event> finish_event(msgpack::zone& zone, const char* body, std::size_t size,
                                                  std::size_t wire_bytes);
  std::nullopt_t fail(DecodeError e, std::string_view detail);
  std::nullopt_t fail_tree(TreeStatus status, DecodeError parse_error, std::size_t at);

  DecodeLimits limits_;
  DecodeStats stats_;
  std::string last_error_;
};

}  // namespace salttap::tap
