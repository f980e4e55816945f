#pragma once
// Events from JSON for correlator tests: ev("salt/job/1/new", R"({"fun": ...})").

#include <stdexcept>
#include <string>

#include "tap/event_decoder.h"
#include "tap/json_event.h"

namespace salttap::testing {

inline tap::Event ev(const std::string& tag, const std::string& data_json) {
  std::string error;
  auto body = tap::event_body_from_json(R"({"tag": ")" + tag + R"(", "data": )" + data_json + "}", &error);
  if (!body) throw std::runtime_error(error);
  tap::EventDecoder decoder;
  auto e = decoder.decode_body(*body);
  if (!e) throw std::runtime_error(decoder.last_error());
  return std::move(*e);
}

}  // namespace salttap::testing
