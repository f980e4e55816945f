#include "cli/internal/replay_command.h"

#include <CLI/CLI.hpp>

#include "common/log.h"
#include "common/steady_time.h"
#include "config/resolve.h"
#include "correlator/correlator.h"
#include "correlator/job_json.h"
#include "daemon/signals.h"
#include "indexer/indexer_service.h"
#include "pipeline/document_pipeline.h"
#include "pipeline/document_sinks.h"
#include "pipeline/event_feed.h"
#include "pipeline/event_loop.h"
#include "tap/event_to_json.h"

namespace salttap::cli {
namespace {

void write(std::FILE* out, const std::string& s) { std::fwrite(s.data(), 1, s.size(), out); }

// Documents through the indexer's real path, then waits for the engine.
int ship_replay(const ReplayOptions& options) {
  daemon::install_stop_signals();
  config::Config cfg = options.config;
  cfg.indexer = config::effective_indexer_config(cfg, tap::MasterBus{});
  indexer::IndexerService indexer(cfg.indexer);
  indexer.start();
  ManualClock clock;
  pipeline::DocumentPipeline pipeline(cfg, clock);
  pipeline::SpoolSink sink(indexer);
  pipeline::CaptureFeed feed(options.files, options.limits, &clock);
  pipeline::EventLoopOptions loop;
  loop.settle_at_end = true;
  loop.give_up = loop.give_up_at_end = [] { return daemon::stop_requested(); };
  const int rc = pipeline::run_event_loop(feed, pipeline, sink, loop);
  const std::uint64_t spooled = sink.documents();
  log::info("replay --ship: {} documents spooled; waiting for the engine to acknowledge {}", spooled,
            indexer.pending());
  SteadyTime& time = real_steady_time();
  const auto deadline = time.now() + options.ship_timeout;
  while (indexer.pending() > 0 && !daemon::stop_requested() && time.now() < deadline)
    time.sleep_for(std::chrono::milliseconds(50));
  const std::uint64_t left = indexer.pending();
  indexer.stop(std::chrono::milliseconds(1000));
  if (left > 0) {
    log::error("replay --ship: {} of {} documents not acknowledged by the engine (kept in the spool)", left, spooled);
    return 1;
  }
  log::info("replay --ship: {} documents built, all acknowledged by the engine", spooled);
  return rc;
}

}  // namespace

int run_replay(const ReplayOptions& options, std::FILE* out) {
  if (options.ship) return ship_replay(options);
  // Replay runs on the events' own time (the feed steps the clock to each
  // event's _stamp): deterministic, whenever it runs.
  ManualClock clock;
  pipeline::CaptureFeed feed(options.files, options.limits, &clock);
  int rc = 0;
  if (options.output == "events") {
    // Straight from the frames' bytes to JSON, no Event (the same lines).
    rc = pipeline::transcode_captures(options.files, options.limits, out);
  } else if (options.output == "documents") {
    // The bulk NDJSON the indexer would spool.
    pipeline::DocumentPipeline pipeline(options.config, clock);
    pipeline::NdjsonSink sink(out);
    pipeline::EventLoopOptions loop;
    loop.settle_at_end = true;
    rc = pipeline::run_event_loop(feed, pipeline, sink, loop);
  } else {
    std::string line;
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
    rc = feed.pump(
        [&](const tap::Event& event) {
          corr.advance();
          corr.on_event(event);
        },
        [] {});
    corr.settle_all();
    const auto& s = corr.stats();
    log::info(
        "replay: {} events, {} jobs, {} returns ({} late, {} duplicate, {} unexpected), {} missing minions, "
        "{} find_job extensions, {} noise events",
        s.events, s.jobs_opened, s.returns, s.late_returns, s.duplicate_returns, s.unexpected_returns,
        s.missing_minions, s.find_job_extensions, s.noise_events);
  }
  std::fflush(out);
  return rc;
}

Command add_replay_command(CLI::App& app, std::string& config_path) {
  struct Flags {
    ReplayOptions options;
    std::uint64_t max_frame_mib = tap::DecodeLimits{}.max_frame_bytes >> 20;
    double missing_after = -1;
    double ship_timeout = 300;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("replay", "Decode captures (raw pub-socket bytes or JSON lines)");
  cmd->add_option("files", f->options.files, "Capture files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--output", f->options.output,
                  "events: one JSON object per event; jobs: one per settled job; "
                  "documents: the bulk NDJSON the indexer would ship")
      ->check(CLI::IsMember({"events", "jobs", "documents"}))
      ->capture_default_str();
  cmd->add_option("--missing-after", f->missing_after,
                  "Seconds after a job's start when its silent minions are "
                  "missing (overrides every deadline)");
  add_frame_limit(*cmd, f->max_frame_mib);
  cmd->add_option("--config", config_path,
                  "salttap config file (YAML): deadlines, audit rules, redaction, "
                  "indexer");
  cmd->add_flag("--ship", f->options.ship,
                "Send the documents through the indexer (spool, bulk) to the configured "
                "engine and wait until it acknowledged them");
  cmd->add_option("--ship-timeout", f->ship_timeout, "Seconds to wait for the engine with --ship")
      ->capture_default_str();
  return {cmd, [f](Invocation& call) {
            ReplayOptions options = f->options;
            options.limits.max_frame_bytes = f->max_frame_mib << 20;
            options.config = call.config();
            options.ship_timeout = from_seconds(f->ship_timeout);
            if (f->missing_after >= 0)
              options.config.correlator.missing_after = static_cast<Micros>(f->missing_after * kMicrosPerSecond);
            return run_replay(options, stdout);
          }};
}

}  // namespace salttap::cli
