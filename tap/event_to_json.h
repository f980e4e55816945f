#pragma once
// JSON rendering of events, as printed by `salttap watch --format json` and
// `salttap replay --output events`: one object {"tag": ..., "data": ...}.
//
// msgpack values that JSON lacks are written as (docs/commands.md, "JSON output"):
//   bin                      {"__bytes_b64__": "<base64>"}   (same key as Salt's captures)
//   ext 78 (datetime)        "YYYY-MM-DDTHH:MM:SS.ffffff"     (isoformat, naive UTC)
//   ext 79 (Salt constant)   {"__salt_constant__": <decoded [name, value]>}
//   other ext                {"__ext__": {"type": n, "b64": "<base64>"}}
//   invalid UTF-8 in str     each bad sequence becomes U+FFFD
//   NaN / Infinity           null
//   non-string map keys      their JSON text: 1 -> "1", nil -> "null", true -> "true";
//                            map/array/ext keys (Python cannot send them) -> "<map key>" etc.

#include <string>

#include "tap/event.h"

namespace salttap::tap {

// Appends {"tag":...,"data":...} (no newline).
void append_event_json(std::string& out, const Event& event);
// Appends the JSON of one msgpack value.
void append_msgpack_json(std::string& out, const msgpack::object& value);
// Same, indented by 4 spaces like `salt-run state.event pretty=True`.
void append_msgpack_json_pretty(std::string& out, const msgpack::object& value);

}  // namespace salttap::tap
