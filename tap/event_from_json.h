#pragma once
// Events from JSON lines ({"tag": ..., "data": ...}), the format of Salt's own
// `state.event` captures and of `salttap watch --format json`. A one-key
// object {"__bytes_b64__": "..."} becomes msgpack bin again, so a JSON-lines
// capture replays through exactly the same path as raw socket bytes.

#include <optional>
#include <string>
#include <string_view>

namespace salttap::tap {

// msgpack bytes of any JSON text (same conversion as event data).
[[nodiscard]] std::optional<std::string> msgpack_from_json(std::string_view json, std::string* error);

// Builds the event body (tag "\n\n" msgpack(data)). On failure returns
// nullopt and sets *error.
[[nodiscard]] std::optional<std::string> event_body_from_json(std::string_view line, std::string* error);

}  // namespace salttap::tap
