// CacheIndexer: hand-made job caches through the live path. Verdicts, the
// documents and their versions, jobs still inside their deadline, late
// returns, and every bad file counted (never a crash).

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <malloc.h>

#include <cerrno>
#include <map>
#include <thread>

#include "jobcache/job_cache_source.h"
#include "recovery/cache_indexer.h"
#include "tests/support/bulk_docs.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/job_cache_fixtures.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;
using jobcache::JobOutcome;
using salttap::testing::CacheDir;
using salttap::testing::CacheOp;
using salttap::testing::FaultyCacheFilesystem;

constexpr const char* kJid = "20261129192428536894";  // 2026-11-29T19:24:28.536894

Micros at(const char* stamp) { return *parse_salt_stamp(stamp); }

using Doc = salttap::testing::ParsedBulkDoc;

class CollectSink final : public pipeline::DocumentSink {
 public:
  void put(std::span<const indexer::BulkDoc> docs, const std::function<bool()>&) override {
    for (const auto& b : docs) docs_.push_back(salttap::testing::parse_bulk_doc(b));
  }
  std::vector<Doc> docs_;
  const Doc* find(std::string_view id) const {
    for (const auto& d : docs_)
      if (d.id == id) return &d;
    return nullptr;
  }
  std::size_t count(std::string_view index_part) const {
    std::size_t n = 0;
    for (const auto& d : docs_) n += d.index.find(index_part) != std::string::npos;
    return n;
  }
};

class Backfill : public ::testing::Test {
 protected:
  Backfill() { config_.master_id = "m1"; }

  // Backfills the cache at wall time `now`.
  void run(const char* now, jobcache::CacheFilesystem& fs = jobcache::posix_cache_filesystem()) {
    source_ = std::make_unique<jobcache::JobCacheSource>(
        cache_.jobs(), jobcache::JobReaderOptions{{}, config_.correlator.noise_funs, {}, "sha256"},
        jobcache::RetryPolicy{.attempts = 1}, fs, time_);
    ASSERT_TRUE(source_->open());
    now_.set(at(now));
    job_ = std::make_unique<recovery::CacheIndexer>(config_, *source_, sink_, now_);
    while (job_->step(3)) {
    }
  }
  const Doc& doc(const std::string& id) {
    const Doc* d = sink_.find(id);
    if (!d) throw std::runtime_error("no document " + id);
    return *d;
  }

  CacheDir cache_;
  config::Config config_ = config::default_config();
  salttap::testing::FakeSteadyTime time_;
  ManualClock now_;
  CollectSink sink_;
  std::unique_ptr<jobcache::JobCacheSource> source_;
  std::unique_ptr<recovery::CacheIndexer> job_;
};

TEST_F(Backfill, ASucceedingPingIsOneFinalJobDocumentAndItsReturns) {
  const auto dir = cache_.publish(kJid, "test.ping", {"minion-a", "minion-b"});
  cache_.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:28.6"));
  cache_.ret(dir, "minion-b", "true", 0, at("2026-11-29T19:24:28.7"));
  run("2026-11-29T20:00:00");
  ASSERT_EQ(sink_.docs_.size(), 3u);  // one job document (the last word), two returns; no raw events
  const Doc& job = doc(std::string("m1/") + kJid);
  EXPECT_EQ(job.index, "salt-jobs-2026.11.29");
  EXPECT_EQ(job.version, *parse_jid_time(kJid) * 4 + 3);  // below any live version of this job
  EXPECT_STREQ(job.source["update"].GetString(), "final");
  EXPECT_STREQ(job.source["status"].GetString(), "succeeded");
  EXPECT_STREQ(job.source["started_at"].GetString(), "2026-11-29T19:24:28.536894Z");
  EXPECT_STREQ(job.source["settled_at"].GetString(), "2026-11-29T19:24:28.700000Z");
  EXPECT_EQ(job.source["counts"]["succeeded"].GetInt(), 2);
  const Doc& ret = doc(std::string("m1/") + kJid + "/minion-a");
  EXPECT_EQ(ret.version, 2);
  EXPECT_STREQ(ret.source["@timestamp"].GetString(), "2026-11-29T19:24:28.600000Z");
  EXPECT_STREQ(ret.source["status"].GetString(), "succeeded");
  EXPECT_FALSE(ret.source["late"].GetBool());
  EXPECT_EQ(job_->counts().jobs_indexed, 1u);
  EXPECT_EQ(job_->counts().documents, 3u);
}

TEST_F(Backfill, AFailingCommandFailsOnItsRetcode) {
  const auto dir = cache_.publish(kJid, "cmd.run", {"minion-a"}, R"(["exit 3"])");
  cache_.ret(dir, "minion-a", R"("oops")", 3, at("2026-11-29T19:24:29"));
  run("2026-11-29T20:00:00");
  const Doc& job = doc(std::string("m1/") + kJid);
  EXPECT_STREQ(job.source["status"].GetString(), "failed");
  EXPECT_STREQ(job.source["failures"][0]["reason"].GetString(), "retcode 3");
  EXPECT_EQ(doc(std::string("m1/") + kJid + "/minion-a").source["retcode"].GetInt(), 3);
  EXPECT_EQ(sink_.count("-alerts-"), 1u);  // as live: a failed job alerts
}

TEST_F(Backfill, AMinionSilentPastTheDeadlineIsMissing) {
  const auto dir = cache_.publish(kJid, "test.ping", {"minion-a", "minion-b"});
  cache_.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  run("2026-11-29T20:00:00");  // test.ping's deadline (60 s) long passed
  const Doc& job = doc(std::string("m1/") + kJid);
  EXPECT_STREQ(job.source["status"].GetString(), "missing");
  EXPECT_STREQ(job.source["settled_at"].GetString(), "2026-11-29T19:25:28.536894Z");  // the deadline, from the jid
  EXPECT_STREQ(job.source["minions"]["missing"][0].GetString(), "minion-b");
  const Doc& missing = doc(std::string("m1/") + kJid + "/minion-b");
  EXPECT_EQ(missing.version, 1);  // a return (2) from the live stream or a later backfill wins
  EXPECT_STREQ(missing.source["status"].GetString(), "missing");
}

TEST_F(Backfill, AJobInsideItsDeadlineIsIndexedAsItStands) {
  const auto dir = cache_.publish(kJid, "test.ping", {"minion-a", "minion-b"});
  cache_.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  run("2026-11-29T19:25:00");  // 32 s into its 60 s
  const Doc& job = doc(std::string("m1/") + kJid);
  EXPECT_STREQ(job.source["update"].GetString(), "opened");
  EXPECT_STREQ(job.source["status"].GetString(), "running");
  EXPECT_EQ(job.version, *parse_jid_time(kJid) * 4);
  EXPECT_EQ(sink_.find(std::string("m1/") + kJid + "/minion-b"), nullptr);  // not missing yet
  EXPECT_EQ(job_->counts().jobs_running, 1u);
}

TEST_F(Backfill, AReturnStoredAfterTheDeadlineIsLate) {
  const auto dir = cache_.publish(kJid, "test.ping", {"minion-a", "minion-b"});
  cache_.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  cache_.ret(dir, "minion-b", "true", 0, at("2026-11-29T19:30:00"));
  run("2026-11-29T20:00:00");
  const Doc& job = doc(std::string("m1/") + kJid);
  EXPECT_STREQ(job.source["status"].GetString(), "succeeded");
  EXPECT_STREQ(job.source["minions"]["late"][0].GetString(), "minion-b");
  EXPECT_EQ(job.source["late_updates"].GetInt(), 1);
  // The missing document the deadline made, then the return that replaces it (version 2 over 1).
  std::vector<std::int64_t> versions;
  for (const auto& d : sink_.docs_)
    if (d.id == std::string("m1/") + kJid + "/minion-b") versions.push_back(d.version);
  EXPECT_EQ(versions, (std::vector<std::int64_t>{1, 2}));
  EXPECT_TRUE(sink_.docs_.back().id == std::string("m1/") + kJid);  // the job document last
}

TEST_F(Backfill, AMinionReturnJobIsScheduledAndSettlesAfterOrphanSettle) {
  const auto dir = cache_.job("20261129192659700689");
  CacheDir::write_json(dir / ".load.p", R"({"cmd": "_return", "id": "minion-a", "fun": "cmd.run",
      "fun_args": ["echo scheduled"], "schedule": "sched_echo", "jid": "20261129192659700689", "pid": 667,
      "return": "scheduled", "retcode": 0, "success": true, "_stamp": "2026-11-29T19:26:59.694234",
      "arg": ["echo scheduled"], "tgt_type": "glob", "tgt": "minion-a"})");
  CacheDir::write_json(dir / ".minions.p", R"(["minion-a"])");
  cache_.ret(dir, "minion-a", R"("scheduled")", 0, at("2026-11-29T19:26:59.71"));
  run("2026-11-29T20:00:00");
  const Doc& job = doc("m1/20261129192659700689");
  EXPECT_STREQ(job.source["kind"].GetString(), "scheduled");
  EXPECT_STREQ(job.source["settled_at"].GetString(), "2026-11-29T19:27:09.710000Z");
  EXPECT_EQ(job.version, *parse_jid_time("20261129192659700689") * 4 + 3);
  EXPECT_STREQ(doc("m1/20261129192659700689/minion-a").source["@timestamp"].GetString(), "2026-11-29T19:26:59.710000Z");
}

TEST_F(Backfill, SkippedJobsMakeNoDocumentsAndAreCounted) {
  cache_.publish("20261129192609725286", "saltutil.find_job", {"minion-a"});
  const auto nocache = cache_.publish("20261129192609725287", "test.ping", {"minion-a"});
  CacheDir::write_bytes(nocache / "nocache", "");
  const auto filtered = cache_.publish("20261129192609725288", "test.version", {"minion-a"});
  cache_.ret(filtered, "minion-a", R"("3006.25")", 0, at("2026-11-29T19:26:10"));
  config_.indexer.documents.functions_blacklist = {"test.version"};
  run("2026-11-29T20:00:00");
  EXPECT_TRUE(sink_.docs_.empty());
  EXPECT_EQ(source_->stats().count(JobOutcome::noise), 1u);
  EXPECT_EQ(source_->stats().count(JobOutcome::nocache), 1u);
  EXPECT_EQ(job_->counts().jobs_filtered, 1u);
  EXPECT_EQ(job_->counts().jobs_indexed, 0u);
}

TEST_F(Backfill, BadFilesAreCountedAndTheOtherJobsIndexed) {
  const auto good = cache_.publish(kJid, "test.ping", {"minion-a"});
  cache_.ret(good, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  // a .load.p cut short, a missing .load.p, a corrupt return.p, a private job directory
  const auto cut = cache_.publish("20261129192428536895", "test.ping", {"minion-a"});
  CacheDir::write_bytes(cut / ".load.p", "\x85\xa3");
  const auto noload = cache_.publish("20261129192428536896", "test.ping", {"minion-a"});
  fs::remove(noload / ".load.p");
  const auto corrupt = cache_.publish("20261129192428536897", "test.ping", {"minion-a"});
  CacheDir::write_bytes(cache_.ret(corrupt, "minion-a", "true", 0, at("2026-11-29T19:24:29")), "\xc1");
  const auto closed = cache_.publish("20261129192428536898", "test.ping", {"minion-a"});
  FaultyCacheFilesystem fs;
  fs.fail(CacheOp::open_dir, closed.filename().string(), EACCES);
  run("2026-11-29T20:00:00", fs);
  const auto& s = source_->stats();
  EXPECT_EQ(s.read, 5u);
  EXPECT_EQ(s.count(JobOutcome::ready), 1u);
  EXPECT_EQ(s.count(JobOutcome::undecodable), 2u);  // the cut load, the corrupt return
  EXPECT_EQ(s.count(JobOutcome::incomplete), 1u);
  EXPECT_EQ(s.count(JobOutcome::unreadable), 1u);
  EXPECT_EQ(job_->counts().jobs_failed, 1u);
  EXPECT_EQ(job_->counts().jobs_indexed, 1u);
  EXPECT_NE(sink_.find(std::string("m1/") + kJid), nullptr);
  EXPECT_EQ(sink_.find("m1/20261129192428536897"), nullptr);  // no half-read job document
}

TEST_F(Backfill, RunnersAndWheelAreTheirOwnKinds) {
  const auto dir = cache_.job("20261129192628798121");
  CacheDir::write_json(dir / ".load.p", R"({"id": "vm_master", "tgt": "vm_master", "jid": "20261129192628798121",
      "return": {"fun": "runner.manage.up", "jid": "20261129192628798121", "user": "root", "fun_args": [],
                 "_stamp": "2026-11-29T19:26:29.091925", "return": ["minion-a"], "success": true},
      "fun": "runner.manage.up", "user": "root"})");
  CacheDir::write_json(dir / ".minions.p", "[]");
  fs::create_directories(dir / "vm_master");
  CacheDir::write_json(dir / "vm_master" / "return.p", R"({"return": {"fun": "runner.manage.up",
      "jid": "20261129192628798121", "user": "root", "fun_args": [], "_stamp": "2026-11-29T19:26:29.091925",
      "return": ["minion-a"], "success": false}})");
  CacheDir::set_mtime(dir / "vm_master" / "return.p", at("2026-11-29T19:26:29.4"));
  run("2026-11-29T20:00:00");
  const Doc& job = doc("m1/20261129192628798121");
  EXPECT_STREQ(job.source["kind"].GetString(), "runner");
  EXPECT_STREQ(job.source["started_at"].GetString(), "2026-11-29T19:26:29.091925Z");  // the new event's own stamp
  EXPECT_STREQ(job.source["settled_at"].GetString(), "2026-11-29T19:26:29.400000Z");
  EXPECT_FALSE(job.source["success"].GetBool());
  EXPECT_STREQ(job.source["status"].GetString(), "failed");
}

// The cache is streamed: the heap in use while backfilling 500 jobs peaks
// where it does for 50 (each job's pipeline is dropped when it is done).
#if !defined(__SANITIZE_ADDRESS__)
class CountSink final : public pipeline::DocumentSink {
 public:
  void put(std::span<const indexer::BulkDoc> docs, const std::function<bool()>&) override { n += docs.size(); }
  std::size_t n = 0;
};

std::size_t peak_heap_backfilling(std::size_t jobs) {
  CacheDir cache;
  for (std::size_t i = 0; i < jobs; ++i) {
    const std::string jid = "202611291924" + std::to_string(10000000 + i);
    const auto dir = cache.publish(jid, "state.apply", {"minion-a", "minion-b"});
    cache.ret(dir, "minion-a", R"({"file_|-f_|-/tmp/f_|-managed": {"result": true, "changes": {}, "comment": "ok",
        "__run_num__": 0, "name": "/tmp/f", "__id__": "f"}})",
              0, at("2026-11-29T19:24:29"));
  }
  config::Config config = config::default_config();
  config.master_id = "m1";
  jobcache::JobCacheSource source(cache.jobs(), {});
  EXPECT_TRUE(source.open());
  ManualClock now(at("2026-11-29T23:00:00"));
  CountSink sink;
  recovery::CacheIndexer job(config, source, sink, now);
  const std::size_t base = mallinfo2().uordblks;
  std::size_t peak = base;
  while (job.step(20)) peak = std::max<std::size_t>(peak, mallinfo2().uordblks);
  EXPECT_EQ(job.counts().jobs_indexed, jobs);
  EXPECT_EQ(sink.n, jobs * 4);  // the job, the return, the missing minion, the missing alert
  return peak > base ? peak - base : 0;
}

TEST(BackfillMemory, DoesNotGrowWithTheCache) {
  const std::size_t small = peak_heap_backfilling(50);
  const std::size_t large = peak_heap_backfilling(500);
  // Anything kept per job (a document, a job, a name) would add >= 64 KiB.
  EXPECT_LT(large, small + (64u << 10)) << "50 jobs: " << small << " bytes, 500 jobs: " << large << " bytes";
}
#endif

}  // namespace
}  // namespace salttap
