#include "pipeline/event_feed.h"

#include <exception>

#include "common/log.h"

namespace salttap::pipeline {
namespace {

// Reads every capture with `read` (which throws on a file it cannot open or
// read), reports what each one skipped, and goes on past a file that failed:
// 1 when one did, else 0.
template <typename Read>
int for_each_capture(const std::vector<std::string>& files, const Read& read) {
  int rc = 0;
  for (const std::string& path : files) {
    tap::CaptureStats stats;
    try {
      read(path, stats);
    } catch (const std::exception& e) {
      log::error("replay: {}", e.what());
      rc = 1;
      continue;
    }
    report_capture(path, stats);
  }
  return rc;
}

}  // namespace

int LiveFeed::pump(const OnEvent& on_event, const OnBatchEnd& on_batch_end) {
  std::vector<tap::Event> events;
  while (!stop_()) {
    events.clear();
    queue_.pop_all(events, busy_ && busy_() ? std::chrono::milliseconds(0) : poll_);
    for (const tap::Event& e : events) on_event(e);
    on_batch_end();
  }
  return 0;
}

int CaptureFeed::pump(const OnEvent& on_event, const OnBatchEnd&) {
  const auto deliver = [&](tap::Event&& event) {
    if (event_time_) {
      if (auto stamp = event.string_field("_stamp"))
        if (auto t = parse_salt_stamp(*stamp); t && *t > event_time_->now()) event_time_->set(*t);
    }
    on_event(event);
  };
  return for_each_capture(files_, [&](const std::string& path, tap::CaptureStats& stats) {
    tap::read_capture(path, limits_, deliver, stats);
  });
}

void report_capture(const std::string& path, const tap::CaptureStats& stats) {
  const auto& f = stats.frames;
  const std::uint64_t bad =
      f.oversize_frames + f.invalid_frames + f.truncated_frames + stats.decode.total_errors() + stats.json_errors;
  if (bad > 0 || f.skipped_bytes > 0) {
    log::warn(
        "replay {}: {} events; skipped: {} oversize, {} invalid, {} truncated frames, {} undecodable, "
        "{} bad JSON lines, {} bytes, {} resyncs",
        path, stats.events, f.oversize_frames, f.invalid_frames, f.truncated_frames, stats.decode.total_errors(),
        stats.json_errors, f.skipped_bytes, f.resyncs);
  }
}

int transcode_captures(const std::vector<std::string>& files, const tap::DecodeLimits& limits, std::FILE* out) {
  const auto write = [out](std::string_view lines) { std::fwrite(lines.data(), 1, lines.size(), out); };
  return for_each_capture(files, [&](const std::string& path, tap::CaptureStats& stats) {
    tap::transcode_capture(path, limits, write, stats);
  });
}

}  // namespace salttap::pipeline
