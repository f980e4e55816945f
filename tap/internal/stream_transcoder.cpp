#include "tap/internal/stream_transcoder.h"

namespace salttap::tap {

void StreamTranscoder::feed(std::string_view bytes, std::string& out) {
  frames_.feed(bytes, [&](std::string_view frame) {
    if (events_.transcode_frame(frame, out))
      out.push_back('\n');
    else if (on_error_)
      on_error_(events_.last_error());
  });
}

}  // namespace salttap::tap
