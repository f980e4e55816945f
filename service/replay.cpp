#include "service/replay.h"

#include <exception>

#include "common/log.h"
#include "tap/capture_file.h"
#include "tap/event_json.h"

namespace salttap::service {

int run_replay(const ReplayOptions& options, std::FILE* out) {
  int rc = 0;
  std::string line;
  for (const std::string& path : options.files) {
    tap::CaptureStats stats;
    try {
      tap::read_capture(path, options.limits, [&](tap::Event&& event) {
        line.clear();
        tap::append_event_json(line, event);
        line.push_back('\n');
        std::fwrite(line.data(), 1, line.size(), out);
      }, stats);
    } catch (const std::exception& e) {
      log::error("replay: {}", e.what());
      rc = 1;
      continue;
    }
    const auto& f = stats.frames;
    const std::uint64_t bad = f.oversize_frames + f.invalid_frames + f.truncated_frames +
                              stats.decode.total_errors() + stats.json_errors;
    if (bad > 0 || f.skipped_bytes > 0) {
      log::warn("replay {}: {} events; skipped: {} oversize, {} invalid, {} truncated frames, {} undecodable, "
                "{} bad JSON lines, {} bytes, {} resyncs",
                path, stats.events, f.oversize_frames, f.invalid_frames, f.truncated_frames,
                stats.decode.total_errors(), stats.json_errors, f.skipped_bytes, f.resyncs);
    }
  }
  std::fflush(out);
  return rc;
}

}  // namespace salttap::service
