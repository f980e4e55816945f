#pragma once
// `salttap backfill`: index what the master's job cache knows and the
// index may lack (docs/backfill.md, docs/commands.md). The cache is found
// from the master config (cachedir, hash_type, job_cache,
// master_job_cache), read job by job through the live path (CacheIndexer)
// and written through the spool to the configured engine; `--dry-run` reads
// and counts without writing anything.

#include <chrono>
#include <optional>
#include <string>

#include "cli/internal/command.h"
#include "config/config.h"
#include "jobcache/cache_filesystem.h"
#include "jobcache/job_cache_source.h"
#include "tap/decode_limits.h"
#include "tap/master_config.h"

namespace salttap::cli {

// Exit codes (docs/commands.md#backfill).
inline constexpr int kBackfillDone = 0;        // every job read; every document acknowledged (or counted: --dry-run)
inline constexpr int kBackfillError = 1;       // config, spool or engine settings: nothing done
inline constexpr int kBackfillUsage = 2;       // bad options
inline constexpr int kBackfillNoJobCache = 3;  // the master keeps no local job cache: nothing to read
inline constexpr int kBackfillCacheUnreadable = 4;  // the jobs directory cannot be read (missing, permissions)
inline constexpr int kBackfillJobsSkipped = 5;      // done, but some jobs could not be read (counted, logged)
inline constexpr int kBackfillNotAcknowledged = 6;  // documents still in the spool when --ship-timeout ran out
inline constexpr int kBackfillInterrupted = 7;      // SIGINT / SIGTERM: stopped early; the spool keeps what it took

struct BackfillOptions {
  config::Config config = config::default_config();
  std::string master_config = tap::kDefaultMasterConfig;
  bool master_config_given = false;
  std::optional<std::string> cachedir;  // instead of the master config's
  std::string since, until;             // as given: a duration before now, or a UTC time
  bool dry_run = false;
  std::optional<std::string> spool_dir;  // instead of indexer.spool.dir
  std::chrono::milliseconds ship_timeout{300'000};
  tap::DecodeLimits limits;
  std::optional<bool> progress_bar;  // nullopt: when stderr is a terminal
  jobcache::RetryPolicy retry;       // jobs caught mid-write
};

int run_backfill(const BackfillOptions& options, jobcache::CacheFilesystem& fs = jobcache::posix_cache_filesystem());

// Registers `backfill` on `app`; --config goes to `config_path`.
Command add_backfill_command(CLI::App& app, std::string& config_path);

}  // namespace salttap::cli
