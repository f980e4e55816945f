#pragma once
// Reading capture files: either raw bytes as read from the pub socket (plain
// or len32 framing, auto-detected) or JSON lines {"tag","data"} (Salt's
// state.event output, or `salttap watch --format json`).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "tap/decode_limits.h"
#include "tap/decode_stats.h"
#include "tap/event.h"
#include "tap/framing.h"

namespace salttap::tap {

enum class CaptureFormat { raw, json_lines };

struct CaptureStats {
  FrameStats frames;
  DecodeStats decode;
  std::uint64_t json_lines = 0;
  std::uint64_t json_errors = 0;
  std::uint64_t events = 0;
};

// JSON lines start with '{' (after whitespace); socket bytes never do.
CaptureFormat detect_capture_format(std::string_view head);

// Calls on_event for each event in stream order. Bad frames or lines are
// counted in `stats` and logged; I/O errors throw std::runtime_error.
void read_capture(const std::string& path, const DecodeLimits& limits, const std::function<void(Event&&)>& on_event,
                  CaptureStats& stats);

// The same reading, straight to JSON lines (`replay --output events`): one
// {"tag":...,"data":...} line per event, as event_to_json.h renders it, with
// no Event built (json_transcoder.h). The lines are gathered in one buffer
// and handed to `write` about every `chunk_bytes` and at the end; the same
// events, errors and counts as read_capture.
void transcode_capture(const std::string& path, const DecodeLimits& limits,
                       const std::function<void(std::string_view lines)>& write, CaptureStats& stats,
                       std::size_t chunk_bytes = std::size_t{1} << 20);

}  // namespace salttap::tap
