#include "tap/internal/stream_decoder.h"

namespace salttap::tap {

StreamDecoder::StreamDecoder(const DecodeLimits& limits) : frames_(limits), events_(limits) {
  frames_.set_owned_sink(
      [this](OwnedFrame&& frame) {
        if (divert_ && divert_(std::string_view(frame.buffer).substr(frame.offset, frame.size))) return;
        deliver(events_.decode_owned(std::move(frame)));
      },
      kHandOverBytes);
}

void StreamDecoder::deliver(std::optional<Event> event) {
  if (event)
    (*current_)(std::move(*event));
  else if (on_error_)
    on_error_(events_.last_error());
}

void StreamDecoder::feed(std::string_view bytes, const EventSink& on_event) {
  current_ = &on_event;
  frames_.feed(bytes, [&](std::string_view frame) {
    if (divert_ && divert_(frame)) return;
    deliver(events_.decode_frame(frame));
  });
  current_ = nullptr;
}

}  // namespace salttap::tap
