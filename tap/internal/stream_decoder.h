#pragma once
// StreamDecoder: bytes of one pub-socket connection -> Events.
// FrameDecoder (framing, resync, limits) + EventDecoder (frame -> Event), the
// one decode path shared by the live reader, replay and the benchmark.

#include <functional>

#include "tap/internal/event_decoder.h"
#include "tap/internal/frame_decoder.h"

namespace salttap::tap {

class StreamDecoder {
 public:
  using EventSink = std::function<void(Event&&)>;

  explicit StreamDecoder(const DecodeLimits& limits = {});
  StreamDecoder(StreamDecoder&&) = delete;  // the frame decoder's sink points at this object

  // Decodes every complete frame in `bytes`; a frame that fails to decode is
  // counted (events().stats()) and reported through on_error, never thrown.
  void feed(std::string_view bytes, const EventSink& on_event);
  void finish() { frames_.finish(); }

  void set_error_sink(std::function<void(const std::string&)> on_error) { on_error_ = std::move(on_error); }
  // Asked with each whole frame before it is decoded: true takes it as it
  // is (the reader's journal), and it is not decoded here.
  using FrameDivert = std::function<bool(std::string_view frame)>;
  void set_divert(FrameDivert divert) { divert_ = std::move(divert); }

  const FrameDecoder& frames() const { return frames_; }
  const EventDecoder& events() const { return events_; }

 private:
  void deliver(std::optional<Event> event);

  // Frames this large were gathered across reads: take their buffer, no copy.
  static constexpr std::size_t kHandOverBytes = std::size_t{64} * 1024;

  FrameDecoder frames_;
  EventDecoder events_;
  std::function<void(const std::string&)> on_error_;
  FrameDivert divert_;
  const EventSink* current_ = nullptr;  // the sink of the feed() in progress
};

}  // namespace salttap::tap
