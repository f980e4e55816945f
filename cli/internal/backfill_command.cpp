#include "cli/internal/backfill_command.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "cli/internal/backfill_progress.h"
#include "common/log.h"
#include "common/steady_time.h"
#include "common/time_bound.h"
#include "config/resolve.h"
#include "daemon/signals.h"
#include "indexer/indexer_service.h"
#include "jobcache/job_cache_location.h"
#include "jobcache/job_cache_source.h"
#include "jobcache/time_window.h"
#include "pipeline/document_sinks.h"
#include "recovery/cache_indexer.h"

namespace salttap::cli {
namespace {

namespace fs = std::filesystem;
using jobcache::JobOutcome;

// --dry-run: documents are built (and counted) and go nowhere.
class DiscardSink final : public pipeline::DocumentSink {
 public:
  void put(std::span<const indexer::BulkDoc>, const std::function<bool()>&) override {}
};

bool parse_window(const BackfillOptions& o, Micros now, jobcache::TimeWindow& window) {
  std::string error;
  for (auto [text, bound, name] :
       {std::tuple{&o.since, &window.since, "--since"}, std::tuple{&o.until, &window.until, "--until"}}) {
    if (text->empty()) continue;
    *bound = parse_time_bound(*text, now, error);
    if (!*bound) {
      log::error("backfill {}: {}", name, error);
      return false;
    }
  }
  if (window.since && window.until && *window.since >= *window.until) {
    log::error("backfill: --since ({}) is not before --until ({})", format_utc(*window.since),
               format_utc(*window.until));
    return false;
  }
  return true;
}

std::string describe_window(const jobcache::TimeWindow& w) {
  if (!w.since && !w.until) return "every job";
  if (!w.until) return "jobs since " + format_utc(*w.since);
  if (!w.since) return "jobs before " + format_utc(*w.until);
  return fmt::format("jobs from {} to {}", format_utc(*w.since), format_utc(*w.until));
}

BackfillSnapshot snapshot(const recovery::CacheIndexer& job, double seconds) {
  const jobcache::JobCacheStats& c = job.cache_stats();
  const recovery::BackfillCounts& n = job.counts();
  return {
      c.job_dirs,
      c.read,
      n.jobs_indexed,
      c.count(JobOutcome::outside_window) + c.count(JobOutcome::noise) + c.count(JobOutcome::nocache) + n.jobs_filtered,
      c.count(JobOutcome::incomplete) + c.count(JobOutcome::undecodable) + c.count(JobOutcome::unreadable),
      seconds};
}

void log_summary(const recovery::CacheIndexer& job, const fs::path& jobs_dir, const std::string& hash_type,
                 double seconds, bool dry_run) {
  const jobcache::JobCacheStats& c = job.cache_stats();
  const recovery::BackfillCounts& n = job.counts();
  log::info(
      "backfill: {} jobs read of {} directories in {} in {:.1f} s: {} indexed ({} still running), skipped: {} "
      "outside the window, {} noise, {} nocache, {} filtered by function; not read: {} incomplete, {} undecodable, "
      "{} unreadable, {} buckets unlistable; {} read again",
      c.read, c.job_dirs, jobs_dir.string(), seconds, n.jobs_indexed, n.jobs_running,
      c.count(JobOutcome::outside_window), c.count(JobOutcome::noise), c.count(JobOutcome::nocache), n.jobs_filtered,
      c.count(JobOutcome::incomplete), c.count(JobOutcome::undecodable), c.count(JobOutcome::unreadable),
      c.unreadable_buckets, c.retries);
  const auto& d = n.documents_by_class;
  const auto cls = [&](indexer::DocClass k) { return d[static_cast<std::size_t>(k)]; };
  log::info("backfill: {} {} documents: {} jobs, {} returns, {} states, {} alerts", dry_run ? "would write" : "spooled",
            n.documents, cls(indexer::DocClass::job), cls(indexer::DocClass::ret), cls(indexer::DocClass::state),
            cls(indexer::DocClass::alert));
  if (c.misnamed)
    log::warn(
        "backfill: {} job directories are not named by their jid's {} digest (written under another hash_type, or "
        "moved): read all the same",
        c.misnamed, hash_type);
  if (c.pending_return_dirs || n.ignored_out_files)
    log::info("backfill: {} minion directories without return.p (no return), {} out.p files not read",
              c.pending_return_dirs, n.ignored_out_files);
}

// Waits until the engine acknowledged every spooled document, or the timeout.
bool wait_for_engine(indexer::IndexerService& indexer, std::chrono::milliseconds timeout) {
  SteadyTime& time = real_steady_time();
  const auto deadline = time.now() + timeout;
  if (indexer.pending() > 0)
    log::info("backfill: waiting up to {} s for the engine to acknowledge {} documents", timeout.count() / 1000,
              indexer.pending());
  while (indexer.pending() > 0 && !daemon::stop_requested() && time.now() < deadline)
    time.sleep_for(std::chrono::milliseconds(50));
  return indexer.pending() == 0;
}

}  // namespace

int run_backfill(const BackfillOptions& options, jobcache::CacheFilesystem& fs) {
  daemon::install_stop_signals();
  const tap::MasterBus master = tap::load_master_config(options.master_config, options.master_config_given);
  if (const auto why = jobcache::no_local_job_cache(master)) {
    log::warn("backfill: nothing to read: {} sets {}; salttap backfills from the local_cache job cache only",
              master.config_path.empty() ? options.master_config : master.config_path, *why);
    return kBackfillNoJobCache;
  }
  SystemClock clock;
  jobcache::TimeWindow window;
  if (!parse_window(options, clock.now(), window)) return kBackfillUsage;

  // Judged as `run` judges: the same master id and the master config's
  // order_masters (a master of masters does not hold its minions' keys).
  config::Config cfg = config::correlating_config(options.config, master);
  const auto [jobs_dir, hash_type] = jobcache::job_cache_location(master, options.cachedir, "backfill");
  jobcache::JobCacheSource source(jobs_dir, {window, cfg.correlator.noise_funs, options.limits, hash_type},
                                  options.retry, fs);
  if (const auto opened = source.open(); !opened) {
    log::error("backfill: cannot read the job cache: {}", opened.error().message);
    return kBackfillCacheUnreadable;
  }
  log::info("backfill: {} job directories in {}; reading {}{}", source.stats().job_dirs, jobs_dir.string(),
            describe_window(window), options.dry_run ? " (dry run: nothing is written)" : "");

  std::unique_ptr<indexer::IndexerService> indexer;
  std::unique_ptr<pipeline::DocumentSink> sink;
  if (options.dry_run) {
    sink = std::make_unique<DiscardSink>();
  } else {
    cfg.indexer = config::effective_indexer_config(cfg, master);
    if (options.spool_dir) cfg.indexer.spool.dir = *options.spool_dir;
    try {
      indexer = std::make_unique<indexer::IndexerService>(cfg.indexer);
    } catch (const indexer::SpoolError& e) {
      log::error(
          "backfill: {} (a running `salttap run` holds its spool: stop it first, or give backfill a spool of its own "
          "with --spool-dir)",
          e.what());
      return kBackfillError;
    }
    indexer->start();
    sink = std::make_unique<pipeline::SpoolSink>(*indexer);
  }

  recovery::CacheIndexer job(cfg, source, *sink, clock, [] { return daemon::stop_requested(); });
  ProgressReporter progress(options.progress_bar.value_or(stderr_is_terminal()), stderr);
  SteadyTime& time = real_steady_time();
  const auto started = time.now();
  const auto elapsed = [&] { return std::chrono::duration<double>(time.now() - started).count(); };
  bool interrupted = false;
  while (job.step(16)) {
    progress.update(snapshot(job, elapsed()));
    if (daemon::stop_requested()) {
      interrupted = true;
      break;
    }
  }
  progress.finish(snapshot(job, elapsed()));
  log_summary(job, jobs_dir, hash_type, elapsed(), options.dry_run);

  int rc = kBackfillDone;
  const jobcache::JobCacheStats& c = job.cache_stats();
  if (c.count(JobOutcome::incomplete) + c.count(JobOutcome::undecodable) + c.count(JobOutcome::unreadable) +
          c.unreadable_buckets >
      0)
    rc = kBackfillJobsSkipped;
  if (indexer) {
    const bool all = !interrupted && wait_for_engine(*indexer, options.ship_timeout);
    const std::uint64_t left = indexer->pending();
    indexer->stop(std::chrono::milliseconds(1000));
    const indexer::ShipperStats s = indexer->shipper_stats();
    log::info(
        "backfill: the engine acknowledged {} documents: {} written, {} already there (409: it had this or a newer "
        "version, skipped), {} dead-lettered",
        s.docs_shipped, s.docs_shipped - s.docs_conflict, s.docs_conflict,
        s.docs_dead_lettered + s.docs_dead_letter_file);
    if (!all && !interrupted) {
      log::error("backfill: {} documents not acknowledged by the engine within {} s (kept in the spool {})", left,
                 options.ship_timeout.count() / 1000, cfg.indexer.spool.dir.string());
      rc = kBackfillNotAcknowledged;
    }
  }
  if (interrupted) {
    log::warn("backfill: interrupted; what was spooled stays in the spool for the next salttap");
    rc = kBackfillInterrupted;
  }
  return rc;
}

Command add_backfill_command(CLI::App& app, std::string& config_path) {
  struct Flags {
    BackfillOptions options;
    std::string cachedir, spool_dir;
    double ship_timeout = 300;
    bool no_progress = false;
    std::uint64_t max_frame_mib = tap::DecodeLimits{}.max_frame_bytes >> 20;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "backfill",
      "Index what the master's job cache knows: jobs that ran while salttap was not running (exit codes: "
      "docs/commands.md)");
  cmd->add_option("--since", f->options.since,
                  "Only jobs whose jid time is at or after this: a duration before now (90s, 15m, 2h, 7d, 1h30m) "
                  "or a UTC date or time (2026-11-29, 2026-11-29T19:04[:50][Z|+HH:MM])");
  cmd->add_option("--until", f->options.until, "Only jobs whose jid time is before this (same forms)");
  cmd->add_option("--master-config", f->options.master_config,
                  "The salt-master's config (cachedir, hash_type, job_cache, master_job_cache, id)")
      ->capture_default_str()
      ->each([f](const std::string&) { f->options.master_config_given = true; });
  cmd->add_option("--cachedir", f->cachedir, "The master's cachedir (reads DIR/jobs), instead of the master config's");
  cmd->add_option("--config", config_path,
                  "salttap config file (YAML) with an indexer: section (without one, the master config's "
                  "elasticsearch: returner block is used); deadlines, audit, redaction as for run");
  cmd->add_flag("--dry-run", f->options.dry_run, "Read the cache and count what would be indexed; write nothing");
  cmd->add_option("--spool-dir", f->spool_dir,
                  "A spool of its own (the configured one is locked while `salttap run` runs)");
  cmd->add_option("--ship-timeout", f->ship_timeout, "Seconds to wait for the engine to acknowledge")
      ->capture_default_str();
  cmd->add_flag("--no-progress", f->no_progress,
                "No progress bar, log lines instead (the default when stderr is not a terminal)");
  add_frame_limit(*cmd, f->max_frame_mib);
  return {cmd, [f](Invocation& call) {
            BackfillOptions options = f->options;
            options.config = call.config();
            options.limits.max_frame_bytes = f->max_frame_mib << 20;
            options.ship_timeout = from_seconds(f->ship_timeout);
            if (!f->cachedir.empty()) options.cachedir = f->cachedir;
            if (!f->spool_dir.empty()) options.spool_dir = f->spool_dir;
            if (f->no_progress) options.progress_bar = false;
            config::choose_master_config(options.config, options.master_config, options.master_config_given);
            return run_backfill(options);
          }};
}

}  // namespace salttap::cli
