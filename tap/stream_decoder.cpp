#include "tap/stream_decoder.h"

namespace salttap::tap {

void StreamDecoder::feed(std::string_view bytes, const EventSink& on_event) {
  frames_.feed(bytes, [&](std::string_view frame) {
    if (auto event = events_.decode_frame(frame)) {
      on_event(std::move(*event));
    } else if (on_error_) {
      on_error_(events_.last_error());
    }
  });
}

}  // namespace salttap::tap
