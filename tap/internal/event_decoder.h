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

  // The same two, but the event goes straight to JSON: {"tag":...,"data":...}
  // (json_transcoder.h) is appended to `out`, no Event is built. Checked and
  // counted exactly as decode_frame / decode_body; false (and `out` as it
  // was) when they would have failed.
  [[nodiscard]] bool transcode_frame(std::string_view frame, std::string& out);
  [[nodiscard]] bool transcode_body(std::string_view body, std::string& out);

  const DecodeStats& stats() const { return stats_; }
  // Human-readable reason of the last failure, for logs.
  const std::string& last_error() const { return last_error_; }

 private:
  [[nodiscard]] std::optional<Event> decode_frame_unguarded(std::string_view frame);
  [[nodiscard]] std::optional<Event> decode_in_place(msgpack::zone& zone, const char* frame, std::size_t size);
  [[nodiscard]] std::optional<Event> decode_body_unguarded(std::string_view body);
  [[nodiscard]] std::optional<Event> finish_event(msgpack::zone& zone, const char* body, std::size_t size,
                                                  std::size_t wire_bytes);
  // Where the data starts after the tag (false: counted as no_separator).
  bool split_tag(std::string_view body, std::string_view& tag, std::size_t& data_off);
  bool transcode_data(std::string_view body, std::string& out);
  std::nullopt_t fail(DecodeError e, std::string_view detail);
  std::nullopt_t fail_tree(TreeStatus status, DecodeError parse_error, std::size_t at);

  DecodeLimits limits_;
  DecodeStats stats_;
  std::string last_error_;
  msgpack::zone scratch_{4096};  // the outer frame's tree when transcoding, reused
};

}  // namespace salttap::tap
