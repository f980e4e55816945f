#pragma once
// BodyDecoder: one bare event body (tag "\n\n" msgpack data) into an Event,
// through the tap's own EventDecoder, for sources that make events without a
// bus frame around them (the job cache). The frame decoders stay internal.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tap/decode_limits.h"
#include "tap/event.h"

namespace salttap::tap {

class EventDecoder;

class BodyDecoder {
 public:
  explicit BodyDecoder(const DecodeLimits& limits = {});
  ~BodyDecoder();
  BodyDecoder(BodyDecoder&&) noexcept;
  BodyDecoder& operator=(BodyDecoder&&) noexcept;

  // nullopt when the decoder refuses the body (last_error() says why).
  [[nodiscard]] std::optional<Event> decode_body(std::string_view body);
  [[nodiscard]] const std::string& last_error() const;

 private:
  std::unique_ptr<EventDecoder> decoder_;
};

}  // namespace salttap::tap
