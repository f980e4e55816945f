#pragma once
// Events from JSON for correlator tests: ev("salt/job/1/new", R"({"fun": ...})").

#include <stdexcept>
#include <string>

#include "tap/event_from_json.h"
#include "tap/internal/event_decoder.h"

namespace salttap::testing {

// Any JSON value as a msgpack tree (for auditor / redactor inputs).
inline msgpack::object_handle from_json(std::string_view json) {
  std::string error;
  const auto bytes = tap::msgpack_from_json(json, &error);
  if (!bytes) throw std::runtime_error(error);
  return msgpack::unpack(bytes->data(), bytes->size());
}

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
