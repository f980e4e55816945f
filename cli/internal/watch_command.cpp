#include "cli/internal/watch_command.h"

#include <CLI/CLI.hpp>
#include <memory>
#include "cli/internal/bus_flags.h"

#include "alerting/alert_dispatcher.h"
#include "alerting/configured_outlets.h"
#include "cli/internal/job_output.h"
#include "common/log.h"
#include "common/metrics_server.h"
#include "common/version.h"
#include "config/resolve.h"
#include "correlator/correlator.h"
#include "correlator/correlator_metrics.h"
#include "correlator/job_json.h"
#include "daemon/signals.h"
#include "tap/event_source.h"
#include "tap/event_to_json.h"
#include "tap/tap_metrics.h"

namespace salttap::cli {

void format_event(std::string& out, const tap::Event& event, const std::string& format) {
  if (format == "json") {
    tap::append_event_json(out, event);
    out.push_back('\n');
    return;
  }
  out.append(event.tag());
  out.push_back('\t');
  tap::append_msgpack_json_pretty(out, event.data());
  out.push_back('\n');
}

int run_watch(const WatchOptions& options, std::FILE* out) {
  daemon::install_stop_signals();
  tap::ReaderOptions reader_options;
  reader_options.endpoint = options.bus.pub();
  reader_options.limits = options.limits;
  tap::EventQueue queue(options.queue);
  tap::EventSourcePtr source = tap::make_event_source(reader_options, queue);
  source->start();

  std::vector<tap::Event> events;
  std::string text;
  std::uint64_t printed = 0;

  SystemClock clock;
  std::unique_ptr<correlator::Correlator> jobs;
  // The master id alerts carry and order_masters, from the master's config
  // as `run` takes them (config/resolve.h), not the file's raw values.
  const config::Config cfg =
      options.jobs ? config::correlating_config(options.config, options.bus.master()) : options.config;
  alerting::AlertDispatcher alerts(cfg.alerts, cfg.master_id);
  alerting::AlertOutlets outlets;
  if (options.jobs) {
    outlets = alerting::make_alert_outlets(config::alert_outlets_config(cfg, options.bus));
    outlets.add_to(alerts);
    jobs = std::make_unique<correlator::Correlator>(
        cfg.correlator, clock,
        [&](correlator::JobUpdate update, const correlator::Job& job) {
          if (!options.job_filter.matches(job, jobs->minions())) return;
          alerts.on_job(update, job, jobs->minions());
          if (update == correlator::JobUpdate::final) return;
          if (options.count && printed >= options.count) return;
          if (options.format == "json") {
            correlator::append_job_json(text, job, jobs->minions());
            text.push_back('\n');
          } else {
            append_job_line(text, job, jobs->minions());
          }
          ++printed;
        },
        cfg.auditor, cfg.redactor);
  }

  Metrics metrics;
  std::unique_ptr<MetricsServer> metrics_server;
  if (!options.metrics_listen.empty())
    metrics_server = std::make_unique<MetricsServer>(options.metrics_listen, metrics,
                                                     [&] { return source->stats().connected.load(); });
  const auto publish = [&] {
    if (!metrics_server) return;
    publish_build_info(metrics);
    tap::publish_tap_metrics(metrics, source->stats(), queue.stats());
    if (!jobs) return;
    correlator::publish_correlator_metrics(metrics, *jobs);
    outlets.publish(metrics, alerts);
  };

  while (!daemon::stop_requested() && (options.count == 0 || printed < options.count)) {
    publish();
    events.clear();
    queue.pop_all(events, std::chrono::milliseconds(200));
    text.clear();
    for (const tap::Event& e : events) {
      if (jobs) {
        // Every event: a job is assembled from several, none of which carries all its fields.
        jobs->advance();
        jobs->on_event(e);
        continue;
      }
      if (!options.filter.matches(e)) continue;
      format_event(text, e, options.format);
      if (++printed == options.count) break;
    }
    if (jobs) jobs->advance();
    if (text.empty()) continue;
    // A closed stdout (EPIPE: `watch | head`) is a normal end for a CLI filter.
    if (std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fflush(out) != 0) break;
  }
  source->stop();
  outlets.stop();
  const tap::TapStats& s = source->stats();
  log::info(
      "watch: {} events read, {} printed; skipped {} undecodable, {} oversize, {} invalid frames, {} bytes; "
      "{} dropped (slow output); {} reconnects",
      s.events.load(), printed, s.decode_errors.load(), s.oversize_frames.load(), s.invalid_frames.load(),
      s.skipped_bytes.load(), s.queue_drops.load(), s.disconnects.load());
  return 0;
}

Command add_watch_command(CLI::App& app, std::string& config_path) {
  struct Flags {
    WatchOptions options;
    // Filled into options.filter (events) or options.job_filter (--jobs) once parsed.
    EventFilter filter;
    std::vector<std::string> tgts;
    double missing_after = -1;
    std::uint64_t max_frame_mib = tap::DecodeLimits{}.max_frame_bytes >> 20;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("watch", "Live, filtered view of the master's event bus");
  add_bus_flags(*cmd, f->options.bus);
  cmd->add_option("--tag", f->filter.tags,
                  "Tag glob (repeatable). Not with --jobs: a job is assembled "
                  "from several events (new, ret/<minion>, prog), so a tag "
                  "names no job; select jobs with the other filters");
  cmd->add_option("--fun", f->filter.funs, "Function glob, e.g. 'state.*' (repeatable)");
  cmd->add_option("--minion", f->filter.minions,
                  "Minion id glob (repeatable); with --jobs: a minion the "
                  "job targeted or that returned");
  cmd->add_option("--jid", f->filter.jids, "Job id glob (repeatable)");
  cmd->add_option("--user", f->filter.users, "User glob (repeatable)");
  cmd->add_option("--tgt", f->tgts,
                  "With --jobs: target glob, matched against the target as published "
                  "(any entry of a list target; repeatable)");
  cmd->add_option("--format", f->options.format, "pretty or json (one JSON object per line)")
      ->check(CLI::IsMember({"pretty", "json"}))
      ->capture_default_str();
  cmd->add_option("--count", f->options.count, "Exit after this many matching events (jobs with --jobs)");
  cmd->add_flag("--jobs", f->options.jobs,
                "One line per settled job: who ran what where; who succeeded, failed, "
                "never returned. Every event is correlated; --fun, --minion, --jid, "
                "--user and --tgt select the jobs printed (and alerted on)");
  cmd->add_option("--missing-after", f->missing_after,
                  "With --jobs: seconds until silent minions are "
                  "missing (overrides every deadline)");
  add_frame_limit(*cmd, f->max_frame_mib);
  cmd->add_option("--metrics-listen", f->options.metrics_listen,
                  "Serve /metrics and /healthz on HOST:PORT "
                  "(e.g. 127.0.0.1:9108)");
  cmd->add_option("--config", config_path, "salttap config file (YAML): deadlines, audit, redaction, alerts");
  return {cmd, [f](Invocation& call) {
            WatchOptions options = f->options;
            if (options.jobs && !f->filter.tags.empty())
              return usage_error("watch",
                                 "--tag filters events and a job is built from several (new, ret/<minion>, "
                                 "prog): with --jobs, select jobs with --fun, --minion, --jid, --user or --tgt");
            if (!options.jobs && !f->tgts.empty())
              return usage_error("watch",
                                 "--tgt selects jobs (only a job's `new` event carries its target): use it "
                                 "with --jobs");
            if (options.jobs)
              options.job_filter = {f->filter.funs, f->filter.minions, f->filter.jids, f->filter.users, f->tgts};
            else
              options.filter = f->filter;
            options.limits.max_frame_bytes = f->max_frame_mib << 20;
            options.config = call.config();
            if (f->missing_after >= 0)
              options.config.correlator.missing_after = static_cast<Micros>(f->missing_after * kMicrosPerSecond);
            config::choose_master_config(options.config, options.bus.master_config, options.bus.master_config_given);
            return run_watch(options, stdout);
          }};
}

}  // namespace salttap::cli
