// `run`'s reconcile (recovery/reconciler.h) on hand-made job caches, a fake
// clock and the live pipeline it shares with the bus: which jobs a pass
// reads, which it indexes from the cache, which it hands to the live
// correlator (and how an orphan the live bus opened becomes its job), the
// coverage record, gaps, and the spool's priority.

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <fstream>

#include <fmt/format.h>

#include "common/errno_text.h"
#include "recovery/reconcile_state.h"
#include "recovery/reconciler.h"
#include "tests/support/bulk_docs.h"
#include "tests/support/events.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/faulty_state_filesystem.h"
#include "tests/support/job_cache_fixtures.h"
#include "tests/support/spool_fixtures.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;
using salttap::testing::CacheDir;
using salttap::testing::ev;

constexpr const char* kOld = "20261129150000000000";     // hours before "now"
constexpr const char* kRecent = "20261129192428536894";  // seconds before "now"
constexpr const char* kNow = "2026-11-29T19:24:35";

Micros at(const char* stamp) { return *parse_salt_stamp(stamp); }

using Doc = salttap::testing::ParsedBulkDoc;
using salttap::testing::parse_bulk_docs;

class CollectSink final : public pipeline::DocumentSink {
 public:
  void put(std::span<const indexer::BulkDoc> docs, const std::function<bool()>&) override {
    for (auto& d : parse_bulk_docs(docs)) docs_.push_back(std::move(d));
  }
  std::vector<Doc> docs_;
};

class Reconcile : public ::testing::Test {
 protected:
  Reconcile() { now_.set(at(kNow)); }
  static config::Config test_config() {
    config::Config c = config::default_config();
    c.master_id = "m1";
    return c;
  }

  recovery::Reconciler& reconciler() {
    if (!reconciler_)
      reconciler_ = std::make_unique<recovery::Reconciler>(
          config_, jobcache::JobCacheLocation{cache_.jobs(), "sha256"}, state_, live_, sink_,
          [this] { return spool_pending_; }, now_, jobcache::posix_cache_filesystem(), time_);
    return *reconciler_;
  }
  // Ticks until the pass in progress ends (connected, nothing dropped, quiet bus).
  void finish_pass() {
    for (int i = 0; i < 1000 && reconciler().tick(true, 0, true); ++i) {
    }
    ASSERT_FALSE(reconciler().pass_running());
  }
  // The live pipeline's documents since the last call.
  std::vector<Doc> live_docs() { return parse_bulk_docs(live_.take_docs()); }
  static const Doc* find(const std::vector<Doc>& docs, const std::string& id) {
    const Doc* found = nullptr;
    for (const auto& d : docs)
      if (d.id == id) found = &d;  // the last one
    return found;
  }
  void write_state(const std::string& text) { std::ofstream(state_path_) << text; }

  CacheDir cache_;
  const salttap::testing::TempDir dir_;
  const fs::path state_path_ = dir_.path() / "reconcile.state";
  salttap::testing::FaultyStateFilesystem state_files_;  // no faults unless a test injects them
  recovery::ReconcileStateFile state_{state_path_, state_files_};
  config::Config config_ = test_config();
  ManualClock now_;
  salttap::testing::FakeSteadyTime time_;
  pipeline::DocumentPipeline live_{config_, now_};
  CollectSink sink_;
  recovery::SpoolPending spool_pending_;
  std::unique_ptr<recovery::Reconciler> reconciler_;
};

TEST_F(Reconcile, WithoutARecordTheWholeCacheIsIndexedWithTheCachesVerdict) {
  const auto dir = cache_.publish(kOld, "test.ping", {"minion-a", "minion-b"});
  cache_.ret(dir, "minion-a", "true", 0, at("2026-11-29T15:00:01"));
  reconciler().start();
  finish_pass();
  const Doc* job = find(sink_.docs_, std::string("m1/") + kOld);
  ASSERT_NE(job, nullptr);
  EXPECT_STREQ(job->source["status"].GetString(), "missing");  // minion-b never returned, long ago
  EXPECT_EQ(job->version, *parse_jid_time(kOld) * 4 + 3);      // below any live version
  EXPECT_NE(find(sink_.docs_, std::string("m1/") + kOld + "/minion-b"), nullptr);
  EXPECT_EQ(reconciler().backfill_counts().jobs_indexed, 1u);
  EXPECT_EQ(reconciler().counts().passes, 1u);
}

TEST_F(Reconcile, ARecordLimitsThePassToTheGapLessTheOverlap) {
  config_.reconcile.overlap = 60 * kMicrosPerSecond;
  cache_.publish("20261129100000000000", "test.ping", {"minion-a"});  // long before the record
  cache_.publish("20261129145900000000", "test.ping", {"minion-a"});  // in the overlap
  cache_.publish(kOld, "test.ping", {"minion-a"});                    // in the gap
  // Tapped until 14:59:30: 15:00:00 is in the gap; the overlap reaches 14:58:30.
  write_state(recovery::format_reconcile_state({at("2026-11-29T14:59:30"), std::nullopt, {}, false}));
  reconciler().start();
  finish_pass();
  EXPECT_NE(find(sink_.docs_, std::string("m1/") + kOld), nullptr);
  EXPECT_NE(find(sink_.docs_, "m1/20261129145900000000"), nullptr);
  EXPECT_EQ(find(sink_.docs_, "m1/20261129100000000000"), nullptr);
  EXPECT_EQ(reconciler().cache_stats().count(jobcache::JobOutcome::outside_window), 1u);
}

TEST_F(Reconcile, OfTheJobsBeforeTheRecordOnlyTheOnesItNamesOpenAreReadAgain) {
  config_.reconcile.overlap = 0;
  cache_.publish("20261129140000000000", "test.ping", {"minion-a"});  // open at the record
  cache_.publish("20261129143000000000", "test.ping", {"minion-a"});  // settled by the last run
  cache_.publish(kOld, "test.ping", {"minion-a"});                    // after the record
  write_state(recovery::format_reconcile_state(
      {at("2026-11-29T14:59:30"), at("2026-11-29T14:00:00"), {"20261129140000000000"}, false}));
  reconciler().start();
  finish_pass();
  EXPECT_NE(find(sink_.docs_, "m1/20261129140000000000"), nullptr);
  EXPECT_EQ(find(sink_.docs_, "m1/20261129143000000000"), nullptr);
  EXPECT_NE(find(sink_.docs_, std::string("m1/") + kOld), nullptr);
  EXPECT_EQ(reconciler().counts().jobs_known, 1u);
}

TEST_F(Reconcile, ATruncatedListOfOpenJobsReadsEveryJobSinceTheOldest) {
  config_.reconcile.overlap = 0;
  cache_.publish("20261129140000000000", "test.ping", {"minion-a"});
  cache_.publish("20261129143000000000", "test.ping", {"minion-a"});
  write_state(recovery::format_reconcile_state({at("2026-11-29T14:59:30"), at("2026-11-29T14:00:00"), {}, true}));
  reconciler().start();
  finish_pass();
  EXPECT_NE(find(sink_.docs_, "m1/20261129140000000000"), nullptr);
  EXPECT_NE(find(sink_.docs_, "m1/20261129143000000000"), nullptr);
}

TEST_F(Reconcile, ABadRecordIsReportedAndTheWholeCacheRead) {
  cache_.publish("20261129100000000000", "test.ping", {"minion-a"});
  write_state("salttap-reconcile 1\nlive_until yesterday\n");
  reconciler().start();
  finish_pass();
  EXPECT_NE(find(sink_.docs_, "m1/20261129100000000000"), nullptr);
}

tap::Event new_event(const char* jid, const char* minions) {
  return ev(std::string("salt/job/") + jid + "/new",
            std::string(R"({"jid": ")") + jid + R"(", "fun": "test.ping", "minions": )" + minions +
                R"(, "tgt": "*", "user": "root", "_stamp": "2026-11-29T19:24:28.536894"})");
}

tap::Event ret_event(const char* jid, const char* minion, const char* stamp) {
  return ev(std::string("salt/job/") + jid + "/ret/" + minion,
            std::string(R"({"jid": ")") + jid + R"(", "id": ")" + minion +
                R"(", "fun": "test.ping", "return": true, "retcode": 0, "success": true, "_stamp": ")" + stamp +
                R"("})");
}

TEST_F(Reconcile, AJobTheLiveCorrelatorSawWhollyIsLeftToIt) {
  const auto dir = cache_.publish(kRecent, "test.ping", {"minion-a"});
  cache_.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  live_.on_event(new_event(kRecent, R"(["minion-a"])"));
  live_.on_event(ret_event(kRecent, "minion-a", "2026-11-29T19:24:29"));
  live_docs();
  reconciler().start();
  finish_pass();
  EXPECT_EQ(reconciler().counts().jobs_known, 1u);
  EXPECT_EQ(reconciler().counts().jobs_followed, 0u);
  EXPECT_EQ(reconciler().counts().returns_passed, 0u);
  EXPECT_TRUE(sink_.docs_.empty());
  EXPECT_TRUE(live_docs().empty());
  EXPECT_EQ(live_.correlator().stats().duplicate_returns, 0u);
}

// The job was open when salttap died; the checkpoint brings it back, but
// minion-b's return came while salttap was down: only the cache has it.
TEST_F(Reconcile, AJobTakenBackFromTheCheckpointGetsTheReturnsThatCameWhileSalttapWasDown) {
  config_.correlator.missing_after = 60 * kMicrosPerSecond;
  live_.reconfigure(config_);
  const auto dir = cache_.publish(kRecent, "test.ping", {"minion-a", "minion-b"});
  cache_.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  cache_.ret(dir, "minion-b", "true", 0, at("2026-11-29T19:24:31"));
  {
    ManualClock then;
    then.set(at("2026-11-29T19:24:29"));
    correlator::Correlator before(config_.correlator, then, [](correlator::JobUpdate, const correlator::Job&) {});
    before.on_event(new_event(kRecent, R"(["minion-a", "minion-b"])"));
    before.on_event(ret_event(kRecent, "minion-a", "2026-11-29T19:24:29"));
    ASSERT_EQ(live_.correlator().restore(before.snapshot()), 1u);
  }
  reconciler().start();
  finish_pass();
  EXPECT_EQ(reconciler().counts().jobs_known, 1u);
  EXPECT_EQ(reconciler().counts().returns_passed, 1u);  // minion-a's was taken before the restart
  EXPECT_TRUE(sink_.docs_.empty());                     // the live path writes it
  const auto docs = live_docs();
  const Doc* job = find(docs, std::string("m1/") + kRecent);
  ASSERT_NE(job, nullptr);
  EXPECT_STREQ(job->source["kind"].GetString(), "job");
  EXPECT_STREQ(job->source["status"].GetString(), "succeeded");
  EXPECT_EQ(job->source["counts"]["succeeded"].GetInt(), 2);
  const Doc* ret = find(docs, std::string("m1/") + kRecent + "/minion-b");
  ASSERT_NE(ret, nullptr);
  EXPECT_STREQ(ret->source["status"].GetString(), "succeeded");
  EXPECT_FALSE(ret->source["late"].GetBool());                                 // the job was still open
  EXPECT_EQ(find(docs, std::string("m1/") + kRecent + "/minion-a"), nullptr);  // not read again
}

// The checkpoint and the coverage record are written at different moments:
// the record may say the job settled (it is not among its open jobs, and it
// began well before the coverage) while the checkpoint still holds it open.
// The pass reads from the oldest job the correlator took back.
TEST_F(Reconcile, APassReadsFromTheOldestJobTakenBackFromTheCheckpoint) {
  config_.correlator.missing_after = 60 * kMicrosPerSecond;
  live_.reconfigure(config_);
  now_.set(at("2026-11-29T19:25:00"));
  const auto dir = cache_.publish(kRecent, "test.ping", {"minion-a"});
  cache_.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:30"));
  write_state(recovery::format_reconcile_state({at("2026-11-29T19:24:50"), std::nullopt, {}, false}));
  {
    ManualClock then;
    then.set(at("2026-11-29T19:24:29"));
    correlator::Correlator before(config_.correlator, then, [](correlator::JobUpdate, const correlator::Job&) {});
    before.on_event(new_event(kRecent, R"(["minion-a"])"));
    ASSERT_EQ(live_.correlator().restore(before.snapshot()), 1u);
  }
  reconciler().start();
  finish_pass();
  EXPECT_EQ(reconciler().cache_stats().count(jobcache::JobOutcome::outside_window), 0u);
  EXPECT_EQ(reconciler().counts().returns_passed, 1u);
  const auto docs = live_docs();
  const Doc* job = find(docs, std::string("m1/") + kRecent);
  ASSERT_NE(job, nullptr);
  EXPECT_STREQ(job->source["status"].GetString(), "succeeded");
}

// The restored job's deadline passed while salttap was down: it settled at
// start with minion-b missing. The cache's return turns that around, late.
TEST_F(Reconcile, ARestoredJobThatSettledWithAMinionMissingTakesItsCachedReturnLate) {
  config_.correlator.missing_after = 3 * kMicrosPerSecond;
  live_.reconfigure(config_);
  const auto dir = cache_.publish(kRecent, "test.ping", {"minion-a", "minion-b"});
  cache_.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  cache_.ret(dir, "minion-b", "true", 0, at("2026-11-29T19:24:30"));
  live_.on_event(new_event(kRecent, R"(["minion-a", "minion-b"])"));
  live_.on_event(ret_event(kRecent, "minion-a", "2026-11-29T19:24:29"));
  live_.advance();  // past the deadline
  auto docs = live_docs();
  const Doc* missing = find(docs, std::string("m1/") + kRecent);
  ASSERT_NE(missing, nullptr);
  ASSERT_STREQ(missing->source["status"].GetString(), "missing");
  const std::int64_t missing_version = missing->version;

  reconciler().start();
  finish_pass();
  EXPECT_EQ(reconciler().counts().returns_passed, 1u);
  docs = live_docs();
  const Doc* job = find(docs, std::string("m1/") + kRecent);
  ASSERT_NE(job, nullptr);
  EXPECT_STREQ(job->source["status"].GetString(), "succeeded");
  EXPECT_EQ(job->source["counts"]["missing"].GetInt(), 0);
  EXPECT_GT(job->version, missing_version);  // replaces the missing verdict in the index
  const Doc* ret = find(docs, std::string("m1/") + kRecent + "/minion-b");
  ASSERT_NE(ret, nullptr);
  EXPECT_STREQ(ret->source["status"].GetString(), "succeeded");
  EXPECT_TRUE(ret->source["late"].GetBool());
}

TEST_F(Reconcile, ARecentJobIsFollowedLiveAndTakesItsLaterReturnsAsTheBusBringsThem) {
  const auto dir = cache_.publish(kRecent, "test.ping", {"minion-a", "minion-b"});
  cache_.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  reconciler().start();
  finish_pass();
  EXPECT_EQ(reconciler().counts().jobs_followed, 1u);
  EXPECT_TRUE(sink_.docs_.empty());  // nothing from the cache: the live path writes it
  live_.on_event(ret_event(kRecent, "minion-b", "2026-11-29T19:24:36"));
  const auto docs = live_docs();
  const Doc* job = find(docs, std::string("m1/") + kRecent);
  ASSERT_NE(job, nullptr);
  EXPECT_STREQ(job->source["kind"].GetString(), "job");
  EXPECT_STREQ(job->source["fun"].GetString(), "test.ping");
  EXPECT_STREQ(job->source["status"].GetString(), "succeeded");
  EXPECT_EQ(job->source["counts"]["succeeded"].GetInt(), 2);
}

TEST_F(Reconcile, AnOrphanTheLiveBusOpenedBecomesItsJobEvenOnceSettled) {
  const auto dir = cache_.publish(kRecent, "test.ping", {"minion-a", "minion-b"});
  cache_.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  // Only minion-a's return reached the restarted salttap: an orphan, settled
  // once orphan_settle passed.
  live_.on_event(ret_event(kRecent, "minion-a", "2026-11-29T19:24:29"));
  now_.set(at("2026-11-29T19:24:50"));
  live_.advance();
  auto docs = live_docs();
  const Doc* orphan = find(docs, std::string("m1/") + kRecent);
  ASSERT_NE(orphan, nullptr);
  EXPECT_STREQ(orphan->source["kind"].GetString(), "orphan");
  const std::int64_t orphan_version = orphan->version;

  reconciler().start();
  finish_pass();
  EXPECT_EQ(reconciler().counts().jobs_followed, 1u);
  // Past the job's deadline (from its jid): minion-b is missing.
  now_.set(at("2026-11-29T20:00:00"));
  live_.advance();
  docs = live_docs();
  const Doc* job = find(docs, std::string("m1/") + kRecent);
  ASSERT_NE(job, nullptr);
  EXPECT_STREQ(job->source["kind"].GetString(), "job");
  EXPECT_STREQ(job->source["fun"].GetString(), "test.ping");
  EXPECT_STREQ(job->source["user"].GetString(), "root");
  EXPECT_STREQ(job->source["status"].GetString(), "missing");
  EXPECT_GT(job->version, orphan_version);  // replaces the orphan in the index
}

TEST_F(Reconcile, ALostConnectionPlansAPassForItsGap) {
  reconciler().start();
  finish_pass();
  ASSERT_EQ(reconciler().counts().passes, 1u);
  now_.set(at("2026-11-29T19:30:00"));
  reconciler().tick(false, 0, true);  // the master went away
  EXPECT_FALSE(reconciler().pass_running());
  cache_.publish("20261129193100000000", "test.ping", {"minion-a"});
  now_.set(at("2026-11-29T19:32:00"));
  reconciler().tick(true, 0, true);  // back: a pass begins
  finish_pass();
  EXPECT_EQ(reconciler().counts().passes, 2u);
  EXPECT_EQ(reconciler().counts().jobs_followed, 1u);  // recent: the live correlator's
}

TEST_F(Reconcile, DroppedEventsPlanAPassToo) {
  reconciler().start();
  finish_pass();
  reconciler().tick(true, 5, true);  // the tap's queue dropped 5 events
  reconciler().tick(true, 5, true);  // and no more since
  EXPECT_EQ(reconciler().counts().passes, 2u);
}

TEST_F(Reconcile, APassWaitsWhileTheSpoolIsBusy) {
  cache_.publish(kOld, "test.ping", {"minion-a"});
  spool_pending_.backfill = config_.reconcile.max_spool_pending + 1;
  reconciler().start();
  EXPECT_FALSE(reconciler().tick(true, 0, true));
  EXPECT_TRUE(sink_.docs_.empty());
  spool_pending_.backfill = config_.reconcile.max_spool_pending;
  finish_pass();
  EXPECT_FALSE(sink_.docs_.empty());
}

TEST_F(Reconcile, APassWaitsWhileTheLiveLaneHoldsMoreThanATenthOfTheLimit) {
  cache_.publish(kOld, "test.ping", {"minion-a"});
  spool_pending_.live = config_.reconcile.max_spool_pending / recovery::kLivePendingShare + 1;
  reconciler().start();
  EXPECT_FALSE(reconciler().tick(true, 0, true)) << "followed jobs' documents would go ahead of live ones";
  EXPECT_TRUE(sink_.docs_.empty());
  spool_pending_.live = config_.reconcile.max_spool_pending / recovery::kLivePendingShare;
  finish_pass();
  EXPECT_FALSE(sink_.docs_.empty());
}

TEST_F(Reconcile, CoverageIsRecordedEveryIntervalAndAtStop) {
  reconciler().start();
  finish_pass();
  now_.set(at("2026-11-29T19:25:00"));
  time_.advance(std::chrono::microseconds(config_.reconcile.state_interval));
  reconciler().tick(true, 0, true);
  recovery::ReconcileState s;
  std::string error;
  ASSERT_EQ(state_.read(s, error), recovery::ReconcileStateFile::Read::found) << error;
  EXPECT_EQ(s.live_until, at("2026-11-29T19:25:00"));
  EXPECT_FALSE(s.open_since);

  live_.on_event(ev(std::string("salt/job/") + kRecent + "/new",
                    std::string(R"({"jid": ")") + kRecent +
                        R"(", "fun": "test.sleep", "minions": ["minion-a"], "tgt": "*", "user": "root",
                            "_stamp": "2026-11-29T19:24:28.536894"})"));
  now_.set(at("2026-11-29T19:26:00"));
  reconciler().stop();
  ASSERT_EQ(state_.read(s, error), recovery::ReconcileStateFile::Read::found) << error;
  EXPECT_EQ(s.live_until, at("2026-11-29T19:25:00"));  // the last tick's
  EXPECT_EQ(s.open_since, at("2026-11-29T19:24:28.536894"));
  EXPECT_EQ(s.open, std::vector<std::string>{kRecent});
}

TEST_F(Reconcile, WhileAPassReadsTheRecordKeepsItsBeginning) {
  for (int i = 0; i < 40; ++i) cache_.publish(fmt::format("202611291500000000{:02}", i), "test.ping", {"minion-a"});
  reconciler().start();
  reconciler().tick(true, 0, false);  // one job read, the pass goes on
  ASSERT_TRUE(reconciler().pass_running());
  reconciler().stop();
  recovery::ReconcileState s;
  std::string error;
  ASSERT_EQ(state_.read(s, error), recovery::ReconcileStateFile::Read::found) << error;
  EXPECT_EQ(s.live_until, 0);  // the whole cache again next time
}

// ---- the record itself ------------------------------------------------------

TEST(ReconcileState, FormatsAndParsesBack) {
  for (const recovery::ReconcileState& s : {recovery::ReconcileState{1764633600000000, std::nullopt, {}, false},
                                            recovery::ReconcileState{5, 3, {"20261129140000000000"}, false},
                                            recovery::ReconcileState{5, 3, {"a", "b_123"}, true}}) {
    std::string error;
    EXPECT_EQ(recovery::parse_reconcile_state(recovery::format_reconcile_state(s), error), s) << error;
  }
}

TEST(ReconcileState, RefusesWhatItDidNotWrite) {
  for (const char* text :
       {"", "salttap-reconcile 2\nlive_until 1\nopen_since -\n", "salttap-reconcile 1\nlive_until -1\nopen_since -\n",
        "salttap-reconcile 1\nlive_until 1\n", "salttap-reconcile 1\nlive_until 1\nopen_since x\n",
        "salttap-reconcile 1\nlive_until 1\nopen_since -\nmore\n",
        "salttap-reconcile 1\nlive_until 1\nopen_since -\nopen \n",
        "salttap-reconcile 1\nlive_until 1\nopen_since -\nopen a b\n",
        "salttap-reconcile 1\nlive_until 1\nopen_since -\nopen_truncated\nopen a\n",
        "salttap-reconcile 1\r\nlive_until 1\r\nopen_since -\r\n"}) {
    std::string error;
    EXPECT_FALSE(recovery::parse_reconcile_state(text, error)) << text;
    EXPECT_FALSE(error.empty()) << text;
  }
}

// The record's caller: a failed write is logged once and counted, the record
// before it stays, and the run goes on; the next write takes over.
TEST_F(Reconcile, AFailedCoverageWriteIsCountedAndKeepsTheRecordBefore) {
  write_state(recovery::format_reconcile_state({at("2026-11-29T14:59:30"), std::nullopt, {}, false}));
  reconciler().start();
  finish_pass();
  recovery::ReconcileState before;
  std::string error;
  ASSERT_EQ(state_.read(before, error), recovery::ReconcileStateFile::Read::found) << error;

  state_files_.inject({.op = salttap::testing::FsOp::rename, .file = "reconcile.state", .error = EIO});
  ::testing::internal::CaptureStderr();
  reconciler().stop();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("ERROR"), std::string::npos) << log;
  EXPECT_NE(log.find(state_path_.string()), std::string::npos) << log;
  EXPECT_NE(log.find(errno_text(EIO)), std::string::npos) << log;
  EXPECT_EQ(reconciler().counts().state_write_errors, 1u);
  recovery::ReconcileState kept;
  ASSERT_EQ(state_.read(kept, error), recovery::ReconcileStateFile::Read::found) << error;
  EXPECT_EQ(kept, before);

  state_files_.clear_faults();
  now_.set(at("2026-11-29T19:30:00"));
  ASSERT_FALSE(reconciler().tick(true, 0, true));
  reconciler().stop();
  EXPECT_EQ(reconciler().counts().state_write_errors, 1u);
  recovery::ReconcileState after;
  ASSERT_EQ(state_.read(after, error), recovery::ReconcileStateFile::Read::found) << error;
  EXPECT_EQ(after.live_until, at("2026-11-29T19:30:00"));
  EXPECT_FALSE(fs::exists(state_path_.string() + ".tmp"));
}

TEST(ReconcileStateFile, AFailedWriteKeepsTheRecordBefore) {
  const salttap::testing::TempDir dir;
  salttap::testing::FaultyStateFilesystem faulty;
  recovery::ReconcileStateFile file(dir.path() / "reconcile.state", faulty);
  ASSERT_TRUE(file.write({100, std::nullopt, {}, false}));
  for (auto op : {salttap::testing::FsOp::write, salttap::testing::FsOp::sync_data, salttap::testing::FsOp::rename}) {
    faulty.clear_faults();
    faulty.inject({.op = op, .file = "", .error = ENOSPC});
    const auto written = file.write({200, 1, {"j"}, false});
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().error, ENOSPC);
    EXPECT_NE(written.error().text().find("No space left"), std::string::npos) << written.error().text();
    faulty.clear_faults();
    std::string error;
    recovery::ReconcileState s;
    ASSERT_EQ(file.read(s, error), recovery::ReconcileStateFile::Read::found) << error;
    EXPECT_EQ(s, (recovery::ReconcileState{100, std::nullopt, {}, false}));
  }
}

TEST(ReconcileStateFile, AbsentAndUnreadableAreTold) {
  const salttap::testing::TempDir dir;
  recovery::ReconcileStateFile file(dir.path() / "reconcile.state");
  recovery::ReconcileState s;
  std::string error;
  EXPECT_EQ(file.read(s, error), recovery::ReconcileStateFile::Read::absent);
  fs::create_directory(dir.path() / "reconcile.state");  // a directory where the file should be
  EXPECT_EQ(file.read(s, error), recovery::ReconcileStateFile::Read::bad);
  EXPECT_NE(error.find("reconcile.state"), std::string::npos) << error;
}

}  // namespace
}  // namespace salttap
