// `salttap backfill` as a command: what it does with masters it cannot read,
// bad options and bad caches, by exit code (docs/commands.md#backfill).
// --dry-run throughout: nothing here needs an engine.

#include <gtest/gtest.h>

#include <cerrno>

#include "cli/internal/backfill_command.h"
#include "tests/support/job_cache_fixtures.h"

namespace salttap {
namespace {

using salttap::testing::CacheDir;
using salttap::testing::CacheOp;
using salttap::testing::FaultyCacheFilesystem;

class BackfillCommand : public ::testing::Test {
 protected:
  BackfillCommand() {
    options_.master_config = (cache_.cachedir() / "master").string();
    options_.master_config_given = true;
    options_.dry_run = true;
    options_.progress_bar = false;
    options_.retry.attempts = 1;  // no waiting for a file to be written
    master("id: m1\n");
    const auto dir = cache_.publish("20200101000000000001", "test.ping", {"minion-a"});
    cache_.ret(dir, "minion-a", "true", 0, *parse_jid_time("20200101000000100000"));
  }
  void master(const std::string& extra) {
    CacheDir::write_bytes(cache_.cachedir() / "master", "cachedir: " + cache_.cachedir().string() + "\n" + extra);
  }

  CacheDir cache_;
  cli::BackfillOptions options_;
};

TEST_F(BackfillCommand, ReadsTheCacheTheMasterConfigNames) {
  EXPECT_EQ(cli::run_backfill(options_), cli::kBackfillDone);
}

TEST_F(BackfillCommand, AMasterWithoutALocalJobCacheIsAWarningAndNothingRead) {
  for (const char* setting : {"job_cache: False\n", "master_job_cache: redis\n", "ext_job_cache: mysql\n"}) {
    master(setting);
    EXPECT_EQ(cli::run_backfill(options_), cli::kBackfillNoJobCache) << setting;
  }
}

TEST_F(BackfillCommand, ACacheThatCannotBeReadIsItsOwnExitCode) {
  FaultyCacheFilesystem fs;
  fs.fail(CacheOp::open_dir, "/jobs", EACCES);
  EXPECT_EQ(cli::run_backfill(options_, fs), cli::kBackfillCacheUnreadable);
  options_.cachedir = (cache_.cachedir() / "elsewhere").string();
  EXPECT_EQ(cli::run_backfill(options_), cli::kBackfillCacheUnreadable);
}

TEST_F(BackfillCommand, BadJobsAreCountedAndSaidByTheExitCode) {
  const auto dir = cache_.publish("20200101000000000002", "test.ping", {"minion-a"});
  CacheDir::write_bytes(dir / ".load.p", "\x81");
  EXPECT_EQ(cli::run_backfill(options_), cli::kBackfillJobsSkipped);
}

TEST_F(BackfillCommand, ATimeWindowItCannotReadIsAUsageError) {
  options_.since = "yesterday";
  EXPECT_EQ(cli::run_backfill(options_), cli::kBackfillUsage);
  options_.since = "2020-01-02";
  options_.until = "2020-01-01";
  EXPECT_EQ(cli::run_backfill(options_), cli::kBackfillUsage);
  options_.since = "2019-12-31";
  options_.until.clear();
  EXPECT_EQ(cli::run_backfill(options_), cli::kBackfillDone);
}

TEST_F(BackfillCommand, WritingNeedsAnIndexer) {
  options_.dry_run = false;
  EXPECT_THROW(cli::run_backfill(options_), ConfigError);  // the CLI says so and exits 1
}

}  // namespace
}  // namespace salttap
