#pragma once
// StreamTranscoder: bytes of one pub-socket connection -> JSON lines, one
// {"tag":...,"data":...} per event, without building Events. The same
// FrameDecoder and EventDecoder as StreamDecoder, so the same framing,
// resync, limits and error counts; EventDecoder::transcode_frame in place of
// decode_frame.

#include <functional>
#include <string>
#include <string_view>

#include "tap/internal/event_decoder.h"
#include "tap/internal/frame_decoder.h"

namespace salttap::tap {

class StreamTranscoder {
 public:
  explicit StreamTranscoder(const DecodeLimits& limits = {}) : frames_(limits), events_(limits) {}

  // Appends one line (JSON and "\n") per event decoded from `bytes` to `out`;
  // a frame that fails is counted (events().stats()) and reported through
  // on_error, never thrown.
  void feed(std::string_view bytes, std::string& out);
  void finish() { frames_.finish(); }

  void set_error_sink(std::function<void(const std::string&)> on_error) { on_error_ = std::move(on_error); }

  const FrameDecoder& frames() const { return frames_; }
  const EventDecoder& events() const { return events_; }

 private:
  FrameDecoder frames_;
  EventDecoder events_;
  std::function<void(const std::string&)> on_error_;
};

}  // namespace salttap::tap
