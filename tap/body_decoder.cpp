#include "tap/body_decoder.h"

#include "tap/internal/event_decoder.h"

namespace salttap::tap {

BodyDecoder::BodyDecoder(const DecodeLimits& limits) : decoder_(std::make_unique<EventDecoder>(limits)) {}
BodyDecoder::~BodyDecoder() = default;
BodyDecoder::BodyDecoder(BodyDecoder&&) noexcept = default;
BodyDecoder& BodyDecoder::operator=(BodyDecoder&&) noexcept = default;

std::optional<Event> BodyDecoder::decode_body(std::string_view body) { return decoder_->decode_body(body); }
const std::string& BodyDecoder::last_error() const { return decoder_->last_error(); }

}  // namespace salttap::tap
