#include "service/replay.h"

#include <exception>
#include <functional>

#include "common/log.h"
#include "correlator/correlator.h"
#include "correlator/job_json.h"
#include "service/document_pipeline.h"
#include "tap/capture_file.h"
#include "tap/event_json.h"

namespace salttap::service {
namespace {

// Feeds every file's events to `on_event`; returns the exit code.
int for_each_event(const ReplayOptions& options, const std::function<void(tap::Event&&)>& on_event) {
  int rc = 0;
  for (const std::string& path : options.files) {
    tap::CaptureStats stats;
    try {
      tap::read_capture(path, options.limits, on_event, stats);
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
  return rc;
}

void write(std::FILE* out, const std::string& s) { std::fwrite(s.data(), 1, s.size(), out); }

}  // namespace

int run_replay(const ReplayOptions& options, std::FILE* out) {
  std::string line;
  int rc = 0;
  if (options.output == "events") {
    rc = for_each_event(options, [&](tap::Event&& event) {
      line.clear();
      tap::append_event_json(line, event);
      line.push_back('\n');
      write(out, line);
    });
  } else if (options.output == "documents") {
    // The bulk NDJSON the indexer would spool, on the events' own time.
    ManualClock clock;
    DocumentPipeline pipeline(options.config, clock);
    const auto flush = [&] {
      for (const auto& doc : pipeline.take_docs()) write(out, doc.ndjson);
    };
    rc = for_each_event(options, [&](tap::Event&& event) {
      if (auto stamp = event.string_field("_stamp"))
        if (auto t = parse_salt_stamp(*stamp); t && *t > clock.now()) clock.set(*t);
      pipeline.advance();
      pipeline.on_event(event);
      flush();
    });
    pipeline.settle_all();
    flush();
  } else {
    // Replay runs on the events' own time: deterministic, whenever it runs.
    ManualClock clock;
    correlator::Correlator corr(
        options.config.correlator, clock,
        [&](correlator::JobUpdate update, const correlator::Job& job) {
          if (update != correlator::JobUpdate::final) return;
          line.clear();
          correlator::append_job_json(line, job, corr.minions());
          line.push_back('\n');
          write(out, line);
        },
        options.config.auditor, options.config.redactor);
    rc = for_each_event(options, [&](tap::Event&& event) {
      if (auto stamp = event.string_field("_stamp"))
        if (auto t = parse_salt_stamp(*stamp); t && *t > clock.now()) clock.set(*t);
      corr.advance();
      corr.on_event(event);
    });
    corr.settle_all();
    const auto& s = corr.stats();
    log::info("replay: {} events, {} jobs, {} returns ({} late, {} duplicate, {} unexpected), {} missing minions, "
              "{} find_job extensions, {} noise events",
              s.events, s.jobs_opened, s.returns, s.late_returns, s.duplicate_returns, s.unexpected_returns,
              s.missing_minions, s.find_job_extensions, s.noise_events);
  }
  std::fflush(out);
  return rc;
}

}  // namespace salttap::service
