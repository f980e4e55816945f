#include "service/replay.h"

#include <exception>
#include <functional>
#include <thread>

#include "common/log.h"
#include "correlator/correlator.h"
#include "correlator/job_json.h"
#include "indexer/indexer_service.h"
#include "service/document_pipeline.h"
#include "service/run.h"
#include "service/signals.h"
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

int ship_replay(const ReplayOptions& options) {
  install_stop_signals();
  Config cfg = options.config;
  cfg.indexer = effective_indexer_config(cfg, tap::MasterBus{});
  indexer::IndexerService indexer(cfg.indexer);
  indexer.start();
  ManualClock clock;
  DocumentPipeline pipeline(cfg, clock);
  std::uint64_t spooled = 0;
  const auto flush = [&] {
    if (const auto flat = indexer.return_flat()) pipeline.documents().set_return_flat(*flat);
    const auto docs = pipeline.take_docs();
    spooled += docs.size();
    indexer.spool(docs, [] { return stop_requested(); });
  };
  int rc = for_each_event(options, [&](tap::Event&& event) {
    if (auto stamp = event.string_field("_stamp"))
      if (auto t = parse_salt_stamp(*stamp); t && *t > clock.now()) clock.set(*t);
    pipeline.advance();
    pipeline.on_event(event);
    if (pipeline.documents().pending_docs() >= 512) flush();  // one spool write per batch
  });
  pipeline.settle_all();
  flush();
  log::info("replay --ship: {} documents spooled; waiting for the engine to acknowledge {}", spooled, indexer.pending());
  const auto deadline = std::chrono::steady_clock::now() + options.ship_timeout;
  while (indexer.pending() > 0 && !stop_requested() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::uint64_t left = indexer.pending();
  Metrics metrics;
  indexer.publish(metrics);
  indexer.stop(std::chrono::milliseconds(1000));
  if (left > 0) {
    log::error("replay --ship: {} of {} documents not acknowledged by the engine (kept in the spool)", left, spooled);
    return 1;
  }
  log::info("replay --ship: {} documents built, all acknowledged by the engine", spooled);
  return rc;
}

int run_replay(const ReplayOptions& options, std::FILE* out) {
  if (options.ship) return ship_replay(options);
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
