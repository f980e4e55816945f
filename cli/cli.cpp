#include "cli/cli.h"

#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/internal/backfill_command.h"
#include "cli/internal/bus_flags.h"
#include "cli/internal/fire_command.h"
#include "cli/internal/jobs_command.h"
#include "cli/internal/minions_command.h"
#include "cli/internal/replay_command.h"
#include "cli/internal/setup_command.h"
#include "cli/internal/ui_command.h"
#include "cli/internal/watch_command.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/text_table.h"
#include "common/time_bound.h"
#include "common/version.h"
#include "config/config.h"
#include "config/resolve.h"
#include "daemon/daemon.h"
#include "http/curl_http_client.h"

namespace salttap::cli {
namespace {

void add_limits(CLI::App& cmd, std::uint64_t& max_frame_mib) {
  cmd.add_option("--max-frame-mib", max_frame_mib, "Skip (and count) frames larger than this")->capture_default_str();
}

// Options that parse but do not make sense together: exit 2, as for a parse error.
int usage_error(const char* command, const std::string& why) {
  std::fprintf(stderr, "salttap %s: %s\nRun with --help for more information.\n", command, why.c_str());
  return 2;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"salttap - know what your Salt fleet actually did"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "salttap " + std::string(version()),
                       "Print the version (and the git describe of the tree it was built from) and exit");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Debug logging");
  std::string log_format = "auto";
  app.add_option("--log-format", log_format,
                 "auto: journal when stderr is systemd's journal (JOURNAL_STREAM), else plain; plain: time, "
                 "level, message; journal: <N> syslog priority, no time; json: one JSON object per line")
      ->check(CLI::IsMember({"auto", "plain", "journal", "json"}))
      ->capture_default_str();
  std::string config_path;

  auto* check_cmd = app.add_subcommand("check-config", "Validate a salttap config file and exit");
  check_cmd->add_option("file", config_path, "Config file (YAML)")->required();

  ReplayOptions replay;
  std::uint64_t max_frame_mib = replay.limits.max_frame_bytes >> 20;
  auto* replay_cmd = app.add_subcommand("replay", "Decode captures (raw pub-socket bytes or JSON lines)");
  replay_cmd->add_option("files", replay.files, "Capture files")->required()->check(CLI::ExistingFile);
  replay_cmd
      ->add_option("--output", replay.output,
                   "events: one JSON object per event; jobs: one per settled job; "
                   "documents: the bulk NDJSON the indexer would ship")
      ->check(CLI::IsMember({"events", "jobs", "documents"}))
      ->capture_default_str();
  double missing_after = -1;
  replay_cmd->add_option("--missing-after", missing_after,
                         "Seconds after a job's start when its silent minions are "
                         "missing (overrides every deadline)");
  add_limits(*replay_cmd, max_frame_mib);
  replay_cmd->add_option("--config", config_path,
                         "salttap config file (YAML): deadlines, audit rules, redaction, "
                         "indexer");
  replay_cmd->add_flag("--ship", replay.ship,
                       "Send the documents through the indexer (spool, bulk) to the configured "
                       "engine and wait until it acknowledged them");
  double ship_timeout = 300;
  replay_cmd->add_option("--ship-timeout", ship_timeout, "Seconds to wait for the engine with --ship")
      ->capture_default_str();

  WatchOptions watch;
  auto* watch_cmd = app.add_subcommand("watch", "Live, filtered view of the master's event bus");
  add_bus_flags(*watch_cmd, watch.bus);
  // Filled into watch.filter (events) or watch.job_filter (--jobs) once parsed.
  EventFilter watch_filter;
  std::vector<std::string> watch_tgts;
  watch_cmd->add_option("--tag", watch_filter.tags,
                        "Tag glob (repeatable). Not with --jobs: a job is assembled "
                        "from several events (new, ret/<minion>, prog), so a tag "
                        "names no job; select jobs with the other filters");
  watch_cmd->add_option("--fun", watch_filter.funs, "Function glob, e.g. 'state.*' (repeatable)");
  watch_cmd->add_option("--minion", watch_filter.minions,
                        "Minion id glob (repeatable); with --jobs: a minion the "
                        "job targeted or that returned");
  watch_cmd->add_option("--jid", watch_filter.jids, "Job id glob (repeatable)");
  watch_cmd->add_option("--user", watch_filter.users, "User glob (repeatable)");
  watch_cmd->add_option("--tgt", watch_tgts,
                        "With --jobs: target glob, matched against the target as published "
                        "(any entry of a list target; repeatable)");
  watch_cmd->add_option("--format", watch.format, "pretty or json (one JSON object per line)")
      ->check(CLI::IsMember({"pretty", "json"}))
      ->capture_default_str();
  watch_cmd->add_option("--count", watch.count, "Exit after this many matching events (jobs with --jobs)");
  watch_cmd->add_flag("--jobs", watch.jobs,
                      "One line per settled job: who ran what where; who succeeded, failed, "
                      "never returned. Every event is correlated; --fun, --minion, --jid, "
                      "--user and --tgt select the jobs printed (and alerted on)");
  double watch_missing_after = -1;
  watch_cmd->add_option("--missing-after", watch_missing_after,
                        "With --jobs: seconds until silent minions are "
                        "missing (overrides every deadline)");
  add_limits(*watch_cmd, max_frame_mib);
  watch_cmd->add_option("--metrics-listen", watch.metrics_listen,
                        "Serve /metrics and /healthz on HOST:PORT "
                        "(e.g. 127.0.0.1:9108)");
  watch_cmd->add_option("--config", config_path, "salttap config file (YAML): deadlines, audit, redaction, alerts");

  FireOptions fire;
  auto* fire_cmd = app.add_subcommand("fire", "Fire one salttap/... event into the master's bus (for reactors)");
  add_bus_flags(*fire_cmd, fire.bus);
  fire_cmd->add_option("--tag", fire.tag, "Event tag; must start with salttap/")->required();
  fire_cmd->add_option("--data", fire.data_json, "Event data, a JSON object")->capture_default_str();
  fire_cmd->add_option("--framing", fire.framing, "Pull-socket framing: auto probes it")
      ->check(CLI::IsMember({"auto", "plain", "len32"}))
      ->capture_default_str();

  daemon::DaemonOptions run;
  auto* run_cmd = app.add_subcommand("run",
                                     "The daemon: tap the bus, correlate, spool and ship to "
                                     "Elasticsearch / OpenSearch, alert");
  add_bus_flags(*run_cmd, run.bus);
  run_cmd->add_option("--config", config_path,
                      "salttap config file (YAML) with an indexer: section (without one, "
                      "the master config's elasticsearch: returner block is used)");
  run_cmd->add_option("--metrics-listen", run.metrics_listen, "Serve /metrics and /healthz on HOST:PORT (empty: off)")
      ->capture_default_str();
  double drain_seconds = 10;
  run_cmd->add_option("--drain-seconds", drain_seconds, "On SIGTERM, time for in-flight bulk requests")
      ->capture_default_str();
  add_limits(*run_cmd, max_frame_mib);

  config::BusLocation setup_bus;
  auto* setup_cmd = app.add_subcommand("setup",
                                       "Detect the engine and install index templates and the retention "
                                       "policy (run does this at every start)");
  add_bus_flags(*setup_cmd, setup_bus);
  setup_cmd->add_option("--config", config_path, "salttap config file (YAML) with an indexer: section");
  DashboardsOptions dashboards;
  auto* dashboards_opt = setup_cmd->add_option(
      "--dashboards", dashboards.url,
      "Then import salttap's saved objects into the Kibana (Elasticsearch) or OpenSearch Dashboards (OpenSearch) "
      "at this base URL, with the indexer's TLS and credentials (exit codes: docs/commands.md)");
  setup_cmd
      ->add_option("--dashboards-file", dashboards.file,
                   "The saved-objects NDJSON to import (default: the installed export for the engine's product)")
      ->needs(dashboards_opt);

  BackfillOptions backfill;
  auto* backfill_cmd = app.add_subcommand(
      "backfill",
      "Index what the master's job cache knows: jobs that ran while salttap was not running (exit codes: "
      "docs/commands.md)");
  backfill_cmd->add_option(
      "--since", backfill.since,
      "Only jobs whose jid time is at or after this: a duration before now (90s, 15m, 2h, 7d, 1h30m) "
      "or a UTC date or time (2026-11-29, 2026-11-29T19:04[:50][Z|+HH:MM])");
  backfill_cmd->add_option("--until", backfill.until, "Only jobs whose jid time is before this (same forms)");
  backfill_cmd
      ->add_option("--master-config", backfill.master_config,
                   "The salt-master's config (cachedir, hash_type, job_cache, master_job_cache, id)")
      ->capture_default_str()
      ->each([&backfill](const std::string&) { backfill.master_config_given = true; });
  std::string backfill_cachedir, backfill_spool;
  backfill_cmd->add_option("--cachedir", backfill_cachedir,
                           "The master's cachedir (reads DIR/jobs), instead of the master config's");
  backfill_cmd->add_option("--config", config_path,
                           "salttap config file (YAML) with an indexer: section (without one, the master config's "
                           "elasticsearch: returner block is used); deadlines, audit, redaction as for run");
  backfill_cmd->add_flag("--dry-run", backfill.dry_run,
                         "Read the cache and count what would be indexed; write nothing");
  backfill_cmd->add_option("--spool-dir", backfill_spool,
                           "A spool of its own (the configured one is locked while `salttap run` runs)");
  double backfill_timeout = 300;
  backfill_cmd->add_option("--ship-timeout", backfill_timeout, "Seconds to wait for the engine to acknowledge")
      ->capture_default_str();
  bool backfill_no_progress = false;
  backfill_cmd->add_flag("--no-progress", backfill_no_progress,
                         "No progress bar, log lines instead (the default when stderr is not a terminal)");
  add_limits(*backfill_cmd, max_frame_mib);

  // jobs, jobs show, minions: the engine as `run` finds it.
  std::string history_master_config = tap::kDefaultMasterConfig;
  bool history_master_config_given = false;
  const auto add_engine_options = [&](CLI::App& cmd, std::string& format) {
    cmd.add_option("--config", config_path,
                   "salttap config file (YAML) with an indexer: section (without one, the master config's "
                   "elasticsearch: returner block is used)");
    cmd.add_option("--master-config", history_master_config, "The salt-master's config (its elasticsearch: block)")
        ->capture_default_str()
        ->each([&](const std::string&) { history_master_config_given = true; });
    cmd.add_option("--format", format, "table (fits the terminal) or json (one document per line)")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
  };
  history::JobsArgs jobs_args;
  HistoryOutput jobs_output;
  auto* jobs_cmd = app.add_subcommand(
      "jobs", "The indexed jobs, newest first, from Elasticsearch / OpenSearch (exit codes: docs/commands.md)");
  jobs_cmd->require_subcommand(0, 1);
  jobs_cmd->add_option("--status", jobs_args.status, "Only jobs with this status")
      ->check(CLI::IsMember({"succeeded", "failed", "missing", "running"}));
  jobs_cmd->add_option("--fun", jobs_args.fun, "Function glob (* and ?), e.g. 'state.*'");
  jobs_cmd->add_option("--minion", jobs_args.minion, "Minion id glob: a minion the job targeted or that returned");
  jobs_cmd->add_option("--user", jobs_args.user, "User glob");
  jobs_cmd->add_option("--tgt", jobs_args.tgt, "Target glob, matched against the target as published");
  jobs_cmd->add_option("--risk", jobs_args.risk, "Only jobs at or above this risk: low, medium, high, critical");
  jobs_cmd->add_option("--since", jobs_args.since,
                       "Jobs started at or after this: a duration before now (90s, 15m, 2h, 7d, 1h30m) or a UTC "
                       "date or time (2026-11-29, 2026-11-29T19:04[:50][Z|+HH:MM])");
  jobs_cmd->add_option("--until", jobs_args.until, "Jobs started before this (same forms)");
  jobs_cmd->add_option("--limit", jobs_args.limit, "At most this many jobs")->capture_default_str();
  add_engine_options(*jobs_cmd, jobs_output.format);
  std::string show_jid;
  HistoryOutput show_output;
  auto* show_cmd = jobs_cmd->add_subcommand("show", "One job with every minion's return and its failed states");
  show_cmd->add_option("jid", show_jid, "The job id")->required();
  add_engine_options(*show_cmd, show_output.format);
  std::string minions_since = "7d";
  HistoryOutput minions_output;
  auto* minions_cmd = app.add_subcommand(
      "minions", "Per minion: jobs, failed, missing, last seen; flaky minions first (exit codes: docs/commands.md)");
  minions_cmd->add_option("--since", minions_since, "Returns of jobs started at or after this (as for jobs)")
      ->capture_default_str();
  add_engine_options(*minions_cmd, minions_output.format);

  UiOptions ui;
  auto* ui_cmd = app.add_subcommand(
      "ui", "The job browser: jobs, a job's minions, minions, alerts, from Elasticsearch / OpenSearch (docs/ui.md)");
  ui_cmd->add_option("--listen", ui.listen, "HOST:PORT to serve /ui/ on (default: ui.listen, 127.0.0.1:9109)");
  ui_cmd->add_option("--config", config_path,
                     "salttap config file (YAML): its indexer: section (else the master config's elasticsearch: "
                     "block) and ui: section");
  ui_cmd->add_option("--master-config", history_master_config, "The salt-master's config (its elasticsearch: block)")
      ->capture_default_str()
      ->each([&](const std::string&) { history_master_config_given = true; });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the error (or the help, code 0)
    // jobs, minions and setup promise exit 2 for every bad option (docs/commands.md).
    return code != 0 && (jobs_cmd->parsed() || minions_cmd->parsed() || setup_cmd->parsed()) ? 2 : code;
  }
  if (verbose) log::set_level(log::Level::debug);
  if (const auto format = log::parse_format(log_format)) log::set_format(*format);  // else auto: detected at start
  if (watch_cmd->parsed()) {
    if (watch.jobs && !watch_filter.tags.empty())
      return usage_error("watch",
                         "--tag filters events and a job is built from several (new, ret/<minion>, "
                         "prog): with --jobs, select jobs with --fun, --minion, --jid, --user or --tgt");
    if (!watch.jobs && !watch_tgts.empty())
      return usage_error("watch",
                         "--tgt selects jobs (only a job's `new` event carries its target): use it "
                         "with --jobs");
    if (watch.jobs) {
      watch.job_filter = {std::move(watch_filter.funs), std::move(watch_filter.minions), std::move(watch_filter.jids),
                          std::move(watch_filter.users), std::move(watch_tgts)};
    } else {
      watch.filter = std::move(watch_filter);
    }
  }

  try {
    const config::Config config = config_path.empty() ? config::default_config() : config::load_config(config_path);
    if (check_cmd->parsed()) {
      std::printf("%s: ok\n", config_path.c_str());
      return 0;
    }
    if (replay_cmd->parsed()) {
      replay.limits.max_frame_bytes = max_frame_mib << 20;
      replay.config = config;
      replay.ship_timeout = std::chrono::milliseconds(static_cast<long>(ship_timeout * 1000));
      if (missing_after >= 0)
        replay.config.correlator.missing_after = static_cast<Micros>(missing_after * kMicrosPerSecond);
      return run_replay(replay, stdout);
    }
    if (watch_cmd->parsed()) {
      watch.limits.max_frame_bytes = max_frame_mib << 20;
      watch.config = config;
      if (watch_missing_after >= 0)
        watch.config.correlator.missing_after = static_cast<Micros>(watch_missing_after * kMicrosPerSecond);
      config::choose_master_config(config, watch.bus.master_config, watch.bus.master_config_given);
      return run_watch(watch, stdout);
    }
    if (fire_cmd->parsed()) return run_fire(fire);
    if (run_cmd->parsed()) {
      run.limits.max_frame_bytes = max_frame_mib << 20;
      run.config = config;
      run.config_path = config_path;
      run.drain = std::chrono::milliseconds(static_cast<long>(drain_seconds * 1000));
      config::choose_master_config(config, run.bus.master_config, run.bus.master_config_given);
      return daemon::run_daemon(run);
    }
    if (backfill_cmd->parsed()) {
      backfill.config = config;
      backfill.limits.max_frame_bytes = max_frame_mib << 20;
      backfill.ship_timeout = std::chrono::milliseconds(static_cast<long>(backfill_timeout * 1000));
      if (!backfill_cachedir.empty()) backfill.cachedir = backfill_cachedir;
      if (!backfill_spool.empty()) backfill.spool_dir = backfill_spool;
      if (backfill_no_progress) backfill.progress_bar = false;
      config::choose_master_config(config, backfill.master_config, backfill.master_config_given);
      return run_backfill(backfill);
    }
    if (jobs_cmd->parsed() || minions_cmd->parsed()) {
      const SystemClock clock;
      history::JobQuery query;
      std::optional<Micros> since;
      std::string why;
      if (show_cmd->parsed()) {
        // Validated first: a bad option is exit 2 before any engine is asked.
      } else if (jobs_cmd->parsed()) {
        if (!history::make_job_query(jobs_args, clock.now(), query, why)) return usage_error("jobs", why);
      } else if (!(since = parse_time_bound(minions_since, clock.now(), why))) {
        return usage_error("minions", "--since: " + why);
      }
      config::choose_master_config(config, history_master_config, history_master_config_given);
      const indexer::IndexerConfig ix = config::effective_indexer_config(
          config, tap::load_master_config(history_master_config, history_master_config_given));
      auto http = http::make_curl_client(ix.http);
      const auto prepared = [](HistoryOutput o) {
        o.width = terminal_width(stdout);
        o.colour = use_colour(stdout);
        return o;
      };
      if (show_cmd->parsed()) return show_job(*http, ix.documents.layout, show_jid, prepared(show_output), stdout);
      if (jobs_cmd->parsed()) return list_jobs(*http, ix.documents.layout, query, prepared(jobs_output), stdout);
      return list_minions(*http, ix.documents.layout, since, prepared(minions_output), stdout);
    }
    if (ui_cmd->parsed()) {
      config::choose_master_config(config, history_master_config, history_master_config_given);
      ui.config = config;
      ui.master_config = history_master_config;
      ui.master_config_given = history_master_config_given;
      return run_ui(ui);
    }
    if (setup_cmd->parsed()) {
      config::choose_master_config(config, setup_bus.master_config, setup_bus.master_config_given);
      return run_setup(config, setup_bus, dashboards);
    }
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return 1;
  }
  return 2;
}

}  // namespace salttap::cli
