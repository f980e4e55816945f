// Settled jobs in compact form (settled_job.h) and the memory budget: a late
// return after compaction is judged and written exactly as with the job kept
// whole, a job costs the bytes the memory model says, and past the budget the
// documented jobs leave first, with the documented verdicts.

#include <gtest/gtest.h>

#include <cstdio>

#include <fmt/format.h>

#include "correlator/alert.h"
#include "correlator/correlator.h"
#include "correlator/job_json.h"
#include "correlator/settled_job.h"
#include "tests/support/correlator_driver.h"

namespace salttap::correlator {
namespace {

constexpr Micros kSec = kMicrosPerSecond;

// Everything a document is made of: each sink update's job JSON, and the job
// fields each accepted return's document repeats.
struct Recorder final : CorrelatorObserver {
  std::vector<std::string> lines;
  const MinionRegistry* minions = nullptr;
  void job_returned(const Job& job, MinionId minion, const tap::Event& /*ret*/, const ReturnAnalysis& a,
                    bool late) override {
    lines.push_back(fmt::format("return {} {} {} {} {} {} {} {} {}", job.jid, minions->name(minion), job.fun, job.user,
                                job.tgt, job.started_at, a.failed, late, a.reason));
  }
};

// The correlator, with every update and each return's fields recorded.
struct Feed : salttap::testing::CorrelatorDriver {
  Recorder recorder;
  std::vector<JobUpdate> updates;
  std::vector<std::string> alerts;

  explicit Feed(CorrelatorConfig config) {
    start(std::move(config), [this](JobUpdate u, const Job& job) {
      std::string json;
      append_job_json(json, job, corr->minions());
      recorder.lines.push_back(fmt::format("job {} {}", static_cast<int>(u), json));
      updates.push_back(u);
      if (u == JobUpdate::settled)
        if (auto a = make_alert(job, corr->minions(), AlertConfig{})) alerts.push_back(a->json);
    });
    recorder.minions = &corr->minions();
    corr->set_observer(&recorder);
  }
};

CorrelatorConfig config(bool compact_settled) {
  CorrelatorConfig c;
  c.compact_settled = compact_settled;
  c.late_grace = 7200 * kSec;
  return c;
}

constexpr const char* kFailedState =
    R"("return": {"cmd_|-boom_|-false_|-run": {"result": false, "comment": "Command \"false\" run", "__id__": "boom",
        "name": "false", "__run_num__": 0, "changes": {}}}, "retcode": 2, "success": false)";

// Every kind of job, each settled, then late returns, progress, a runner's
// late outcome, and the end of the grace window.
void scenario(Feed& r) {
  r.new_job("20261201120000000001", "state.apply", R"(["a", "b", "c"])", R"(["web", "password=hunter2"])");
  r.ret("20261201120000000001", "a", R"("return": {}, "retcode": 0, "success": true)", "state.apply");
  r.ret("20261201120000000001", "b", kFailedState, "state.apply");
  r.new_job("20261201120000000002", "cmd.run", R"(["a", "b"])", R"(["rm -rf /"])");
  r.ret("20261201120000000002", "a", R"("return": "x", "retcode": 1, "success": false)", "cmd.run");
  r.new_job("20261201120000000003", "test.ping", R"(["a", "b"])");
  r.ret("20261201120000000003", "a");
  r.ret("20261201120000000003", "b");
  r.ret("20261201120000000004", "a");  // an orphan
  r.feed("salt/run/20261201120000000005/new", R"({"fun": "runner.jobs.list_jobs", "fun_args": []})");
  r.feed("salt/run/20261201120000000005/ret", R"({"fun": "runner.jobs.list_jobs", "return": {}, "success": true})");
  r.new_job("longer-than-fifteen-bytes", "test.ping", R"(["a"])");  // stays whole
  r.at(30);                                                         // the orphan settles
  r.at(4000);                                                       // every deadline has passed
  r.ret("20261201120000000001", "c", R"("return": {}, "retcode": 0, "success": true)", "state.apply");  // late
  r.ret("20261201120000000001", "c");                                                                   // duplicate
  r.ret("20261201120000000002", "b", R"("return": "y", "retcode": 0, "success": true)", "cmd.run");     // late
  r.feed("salt/job/20261201120000000003/prog/a/0", R"({"id": "a"})");
  r.ret("20261201120000000004", "b");  // late to the settled orphan
  r.feed("salt/run/20261201120000000005/ret", R"({"fun": "runner.jobs.list_jobs", "return": {}, "success": true})");
  r.ret("longer-than-fifteen-bytes", "a");  // late
  r.at(20000);                              // every grace window has ended: finals
}

TEST(SettledJob, ALateReturnAfterCompactionWritesWhatTheWholeJobWould) {
  Feed whole(config(false)), packed(config(true));
  scenario(whole);
  scenario(packed);
  ASSERT_GT(whole.recorder.lines.size(), 20U);
  EXPECT_EQ(packed.recorder.lines, whole.recorder.lines);
  EXPECT_EQ(packed.alerts, whole.alerts);
  EXPECT_EQ(packed.corr->stats().late_returns, whole.corr->stats().late_returns);
  EXPECT_GT(packed.corr->stats().late_returns, 2U);
  EXPECT_EQ(packed.corr->tracked_jobs(), 0U);
}

TEST(SettledJob, SettledJobsWaitCompactAndShareTheirLoad) {
  Feed r(config(true));
  for (int i = 0; i < 100; ++i) {
    const std::string jid = fmt::format("202612011200000{:05}", i);
    r.new_job(jid, "test.ping", R"(["a", "b"])");
    r.ret(jid, "a");
    r.ret(jid, "b");
  }
  EXPECT_EQ(r.corr->settled_jobs(), 100U);
  const CorrelatorSnapshot s = r.corr->snapshot();
  EXPECT_TRUE(s.jobs.empty());
  ASSERT_EQ(s.settled.size(), 100U);
  EXPECT_EQ(s.loads.size(), 2U) << "one load for the 100 jobs of one command, after the unused [0]";
  EXPECT_EQ(s.details.size(), 1U) << "no job has a detail";
  const auto found = r.corr->find("20261201120000000042");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->fun, "test.ping");
  EXPECT_EQ(found->succeeded, 2U);
  EXPECT_TRUE(found->settled);
}

TEST(SettledJob, JidKeysHoldSaltsJidsAndShortOnes) {
  for (const std::string jid :
       {"20261201120000000001", "000123", "1", "123456789012345678901234567890", "req-42", "fifteen-bytes-x"}) {
    const auto key = JidKey::of(jid);
    ASSERT_TRUE(key) << jid;
    EXPECT_EQ(key->text(), jid);
  }
  EXPECT_FALSE(JidKey::of("1234567890123456789012345678901"));  // 31 digits
  EXPECT_FALSE(JidKey::of("sixteen-bytes-xx"));
  EXPECT_FALSE(JidKey::of(""));
  EXPECT_NE(*JidKey::of("0012"), *JidKey::of("012"));
}

// Every list comes back as given: inline when its values fit the word, else
// allocated; copies and moves keep it.
TEST(SettledJob, PackedMinionsKeepEveryListInlineOrAllocated) {
  const std::uint32_t top = PackedMinions::pack(PackedMinions::kMaxId, 0x0F);
  const std::vector<std::vector<std::uint32_t>> lists = {
      {},       {0},       {top},     {0, 0},         {(1u << 31) - 2, top - 1}, {(1u << 31) - 1, 5},
      {7, top}, {1, 2, 3}, {0, 0, 0}, {17, 4242, top}};
  for (const auto& list : lists) {
    const PackedMinions packed(list);
    EXPECT_EQ(packed.values(), list);
    EXPECT_EQ(packed.size(), list.size());
    const bool inline_expected =
        list.size() <= 2 && (list.empty() || list[0] < (1u << 31) - 1) && (list.size() < 2 || list[1] < UINT32_MAX);
    EXPECT_EQ(packed.heap_bytes(), inline_expected ? 0 : (list.size() + 1) * 4) << list.size();
    PackedMinions copy(packed);
    EXPECT_EQ(copy.values(), list);
    PackedMinions moved(std::move(copy));
    EXPECT_EQ(moved.values(), list);
    EXPECT_EQ(copy.size(), 0U);  // NOLINT(bugprone-use-after-move): a moved-from list is empty
    moved = packed;
    EXPECT_EQ(moved.values(), list);
  }
}

// The memory model of docs/ARCHITECTURE.md, measured.
TEST(SettledJob, BytesPerJobAreWhatTheMemoryModelSays) {
  static_assert(sizeof(JidKey) == 16);
  static_assert(sizeof(PackedMinions) == 8);
  static_assert(sizeof(SettledJob) == 56);
  SettledJob two;
  two.minions = PackedMinions(std::vector<std::uint32_t>{PackedMinions::pack(1, kSucceeded)});
  EXPECT_EQ(two.memory_bytes(), sizeof(SettledJob)) << "two minions or fewer: inline";
  SettledJob wide;
  wide.minions = PackedMinions(std::vector<std::uint32_t>(1000, 0));
  EXPECT_EQ(wide.memory_bytes(), sizeof(SettledJob) + 4 + 4000) << "4 bytes a minion and the count";

  CorrelatorConfig c = config(true);
  c.max_jobs = 1'000'000;
  Feed r(c);
  const std::size_t empty = r.corr->jobs_bytes();
  constexpr int kJobs = 10'000;
  for (int i = 0; i < kJobs; ++i) {
    const std::string jid = fmt::format("2026120112{:010}", i);
    r.new_job(jid, "test.ping", R"(["a", "b"])");
    r.ret(jid, "a");
  }
  const double per_open = static_cast<double>(r.corr->jobs_bytes() - empty) / kJobs;
  for (int i = 0; i < kJobs; ++i) r.ret(fmt::format("2026120112{:010}", i), "b");
  ASSERT_EQ(r.corr->settled_jobs(), static_cast<std::size_t>(kJobs));
  const double per_settled = static_cast<double>(r.corr->jobs_bytes() - empty) / kJobs;
  std::printf("bytes per job of 2 minions: open %.0f, settled in grace %.0f (sizeof Job %zu, SettledJob %zu)\n",
              per_open, per_settled, sizeof(Job), sizeof(SettledJob));
  // The map slot (key + SettledJob + control byte) and the grace queue entry.
  EXPECT_LE(per_settled, 16 + sizeof(SettledJob) + 1 + 24 + 1);
  EXPECT_LE(per_settled, 100) << "the target: at most 100 bytes a settled job";
  EXPECT_LT(per_settled * 5, per_open) << "settling must cost a fraction of the open job";
}

// ---- the memory budget ----------------------------------------------------

TEST(MemoryBudget, TheOldestSettledJobsLeaveFirstAndTheirReturnsAreLateUnknown) {
  CorrelatorConfig c = config(true);
  c.memory_budget = 1;  // below any job: every settled job leaves at once
  Feed r(c);
  r.new_job("20261201120000000001", "test.ping", R"(["a", "b"])");
  EXPECT_EQ(r.corr->tracked_jobs(), 0U) << "the open job was over the budget as well";
  ASSERT_EQ(r.updates.size(), 2U);
  EXPECT_EQ(r.updates[0], JobUpdate::settled);
  EXPECT_EQ(r.updates[1], JobUpdate::final);
  EXPECT_EQ(r.corr->stats().budget_evicted_open, 1U);
  ASSERT_EQ(r.alerts.size(), 1U);
  EXPECT_NE(r.alerts[0].find(R"("alert":"evicted","kinds":["evicted","missing"])"), std::string::npos) << r.alerts[0];
  EXPECT_NE(r.alerts[0].find(R"("evicted":"memory_budget")"), std::string::npos);
  EXPECT_NE(r.alerts[0].find(R"("missing":["a","b"])"), std::string::npos) << "pending minions are missing";

  const std::size_t lines = r.recorder.lines.size();
  r.ret("20261201120000000001", "b");  // a return for the evicted job
  EXPECT_EQ(r.corr->stats().late_unknown_returns, 1U);
  EXPECT_EQ(r.corr->tracked_jobs(), 0U) << "no orphan is made of it";
  EXPECT_EQ(r.recorder.lines.size(), lines) << "nothing written";
}

TEST(MemoryBudget, SettledJobsLeaveBeforeOpenOnes) {
  CorrelatorConfig c = config(true);
  Feed probe(c);
  probe.new_job("20261201120000000001", "test.ping", R"(["a", "b"])");
  const std::size_t open_job = probe.corr->jobs_bytes();
  c.memory_budget = 3 * open_job;  // two open jobs (the old one and a new one), a few settled ones
  Feed r(c);
  r.new_job("20261201120000000001", "test.ping", R"(["a", "b"])");  // stays open
  for (int i = 2; i < 40; ++i) {
    const std::string jid = fmt::format("202612011200000000{:02}", i);
    r.new_job(jid, "test.ping", R"(["a"])");
    r.ret(jid, "a");
  }
  EXPECT_TRUE(r.corr->find("20261201120000000001")) << "the open job stays while settled ones can leave";
  EXPECT_FALSE(r.corr->find("20261201120000000002")) << "the oldest settled left";
  EXPECT_TRUE(r.corr->find("20261201120000000039")) << "the newest settled stays";
  EXPECT_GT(r.corr->stats().budget_evicted_settled, 0U);
  EXPECT_EQ(r.corr->stats().budget_evicted_open, 0U);
  EXPECT_LE(r.corr->jobs_bytes(), c.memory_budget);
  const std::size_t finals = static_cast<std::size_t>(std::count(r.updates.begin(), r.updates.end(), JobUpdate::final));
  EXPECT_EQ(finals, r.corr->stats().budget_evicted_settled) << "each evicted job had its last word";
}

}  // namespace
}  // namespace salttap::correlator
