// Job lifecycle on a fake clock: every rule of correlator.h.

#include <gtest/gtest.h>

#include <algorithm>

#include "correlator/correlator.h"
#include "correlator/job_json.h"
#include "tests/support/correlator_driver.h"

namespace salttap::correlator {
namespace {

constexpr Micros kSec = kMicrosPerSecond;
constexpr Micros kT0 = salttap::testing::CorrelatorDriver::kT0;

struct Emitted {
  JobUpdate update;
  std::string jid;
  JobStatus status;
  std::string json;
};

class CorrelatorTest : public ::testing::Test, protected salttap::testing::CorrelatorDriver {
 protected:
  CorrelatorTest() { make({}); }

  // A new correlator with `config`, every update it sends kept in out_.
  void make(CorrelatorConfig config) {
    start(std::move(config), [this](JobUpdate u, const Job& job) {
      std::string json;
      append_job_json(json, job, corr->minions());
      out_.push_back({u, job.jid, job.status(), json});
    });
  }
  std::vector<Emitted> of(JobUpdate u) const {
    std::vector<Emitted> r;
    for (const auto& e : out_)
      if (e.update == u) r.push_back(e);
    return r;
  }
  bool json_has(const Emitted& e, const std::string& needle) const { return e.json.find(needle) != std::string::npos; }

  std::vector<Emitted> out_;
};

TEST_F(CorrelatorTest, SettlesWhenEveryMinionReturned) {
  new_job("1", "test.ping", R"(["a", "b"])");
  ret("1", "a");
  EXPECT_TRUE(out_.empty());
  ret("1", "b");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].update, JobUpdate::settled);
  EXPECT_EQ(out_[0].status, JobStatus::succeeded);
  EXPECT_TRUE(json_has(out_[0], R"("succeeded":["a","b"],"failed":[],"missing":[])"));
}

TEST_F(CorrelatorTest, SilentMinionIsMissingAtTheDeadlineNotBefore) {
  new_job("1", "test.ping", R"(["a", "b"])");
  ret("1", "a");
  at(59);
  EXPECT_TRUE(out_.empty());
  at(60);  // test.ping: 60 s
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].status, JobStatus::missing);
  EXPECT_TRUE(json_has(out_[0], R"("missing":["b"])"));
  EXPECT_EQ(corr->stats().missing_minions, 1u);
}

TEST_F(CorrelatorTest, ALateReturnUpdatesTheJob) {
  new_job("1", "test.ping", R"(["a", "b"])");
  ret("1", "a");
  at(61);
  ret("1", "b");
  ASSERT_EQ(of(JobUpdate::updated).size(), 1u);
  const Emitted u = of(JobUpdate::updated)[0];
  EXPECT_EQ(u.status, JobStatus::succeeded);
  EXPECT_TRUE(json_has(u, R"("missing":[],"late":["b"])"));
  EXPECT_TRUE(json_has(u, R"("late_updates":1)"));
  EXPECT_EQ(corr->stats().late_returns, 1u);
}

TEST_F(CorrelatorTest, DuplicateReturnsAreIdempotent) {
  new_job("1", "test.ping", R"(["a", "b"])");
  ret("1", "a");
  ret("1", "a", R"("return": false, "retcode": 1, "success": false)");  // the first one wins
  ret("1", "b");
  ret("1", "b");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].status, JobStatus::succeeded);
  EXPECT_EQ(corr->stats().duplicate_returns, 2u);
}

TEST_F(CorrelatorTest, FailureIsComputedNotTrusted) {
  new_job("1", "cmd.run", R"(["a", "b", "c", "d"])");
  ret("1", "a", R"("return": "boom", "retcode": 3, "success": true)", "cmd.run");  // pre-2019.2 success semantics
  ret("1", "b", R"("return": "'nosuch.function' is not available.", "retcode": 1)", "cmd.run");
  ret("1", "c", R"("return": "ok", "retcode": 0, "success": false)", "cmd.run");
  ret("1", "d", R"("return": "ok", "retcode": 0, "success": true)", "cmd.run");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].status, JobStatus::failed);
  EXPECT_TRUE(json_has(out_[0], R"("succeeded":["d"],"failed":["a","b","c"])"));
  EXPECT_TRUE(json_has(out_[0], R"({"minion":"a","reason":"retcode 3"})"));
  EXPECT_TRUE(
      json_has(out_[0], R"("minion":"b","reason":"function not available: 'nosuch.function' is not available.")"));
  EXPECT_TRUE(json_has(out_[0], R"({"minion":"c","reason":"success false"})"));
}

TEST_F(CorrelatorTest, FailedWinsOverMissing) {
  new_job("1", "cmd.run", R"(["a", "b"])");
  ret("1", "a", R"("return": "", "retcode": 1, "success": false)", "cmd.run");
  at(900);
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].status, JobStatus::failed);
  EXPECT_TRUE(json_has(out_[0], R"("failed":["a"],"missing":["b"])"));
}

TEST_F(CorrelatorTest, StateRunsAreCountedAndFailedStatesListedInOrder) {
  const std::string states = R"("return": {
      "cmd_|-second_|-false_|-run": {"result": false, "comment": "Command \"false\" run", "name": "false", "__id__": "second", "__run_num__": 1, "changes": {"retcode": 1}},
      "cmd_|-first_|-exit 2_|-run": {"result": false, "comment": ["one", "two"], "name": "exit 2", "__id__": "first", "__run_num__": 0, "changes": {}},
      "file_|-ok_|-/tmp/x_|-managed": {"result": true, "comment": "", "name": "/tmp/x", "__id__": "ok", "__run_num__": 2, "changes": {"diff": "new"}},
      "pkg_|-maybe_|-vim_|-installed": {"result": null, "comment": "would install", "name": "vim", "__id__": "maybe", "__run_num__": 3, "changes": {}}
    }, "retcode": 2, "success": false)";
  new_job("1", "state.apply", R"(["a"])");
  ret("1", "a", states, "state.apply");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].status, JobStatus::failed);
  EXPECT_TRUE(json_has(out_[0], R"("states":{"total":4,"succeeded":1,"failed":2,"changed":2,"would_change":1})"));
  EXPECT_TRUE(json_has(
      out_[0],
      R"("failed_states":[{"minion":"a","id":"first","name":"exit 2","function":"cmd.run","comment":"one\ntwo","run_num":0},{"minion":"a","id":"second")"));
  EXPECT_TRUE(json_has(out_[0], R"({"minion":"a","reason":"2 of 4 states failed"})"));
}

TEST_F(CorrelatorTest, WouldChangeIsNotFailure) {
  new_job("1", "state.apply", R"(["a"])");
  ret("1", "a",
      R"("return": {"pkg_|-maybe_|-vim_|-installed": {"result": null, "comment": "", "name": "vim", "__run_num__": 0, "changes": {}}}, "retcode": 0, "success": true)",
      "state.apply");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].status, JobStatus::succeeded);
  EXPECT_TRUE(json_has(out_[0], R"("would_change":1)"));
}

TEST_F(CorrelatorTest, RenderErrorsAreFailures) {
  new_job("1", "state.apply", R"(["a"])");
  ret("1", "a", R"("return": ["Rendering SLS 'base:bad' failed: mapping values are not allowed"], "retcode": 1)",
      "state.apply");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].status, JobStatus::failed);
  EXPECT_TRUE(json_has(out_[0], R"("reason":"render/compile error: Rendering SLS 'base:bad' failed)"));
}

TEST_F(CorrelatorTest, FindJobAnswersExtendTheMinionsDeadline) {
  new_job("1", "test.sleep", R"(["a", "b"])");  // test.*: 300 s
  at(250);
  // The CLI's find_job: still running on a, nothing on b.
  feed(
      "salt/job/2/new",
      R"({"jid": "2", "fun": "saltutil.find_job", "arg": ["1"], "minions": ["a", "b"], "tgt": ["a", "b"], "tgt_type": "list"})");
  ret("2", "a", R"("return": {"jid": "1", "fun": "test.sleep", "pid": 7}, "retcode": 0, "fun_args": ["1"])",
      "saltutil.find_job");
  ret("2", "b", R"("return": {}, "retcode": 0, "fun_args": ["1"])", "saltutil.find_job");
  EXPECT_EQ(corr->stats().find_job_extensions, 1u);
  at(300);
  EXPECT_TRUE(out_.empty()) << "b is missing but a is still running";
  at(549);
  EXPECT_TRUE(out_.empty());
  at(550);  // 250 + 300
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_TRUE(json_has(out_[0], R"("missing":["a","b"])"));
  // find_job traffic is noise: never reported as a job.
  for (const auto& e : out_) EXPECT_NE(e.jid, "2");
  EXPECT_EQ(corr->stats().noise_events, 3u);
}

TEST_F(CorrelatorTest, ReturnsWithoutNewFormScheduledAndOrphanJobs) {
  ret("7", "a",
      R"("return": "scheduled", "retcode": 0, "success": true, "schedule": "sched_echo", "fun_args": ["echo hi"], "pid": 1)",
      "cmd.run");
  ret("8", "b", R"("return": true, "retcode": 0)", "test.ping");  // salt-call: no success, no user
  at(9);
  EXPECT_TRUE(out_.empty());
  at(10);
  ASSERT_EQ(out_.size(), 2u);
  EXPECT_TRUE(json_has(out_[0], R"("kind":"scheduled","fun":"cmd.run","args":["echo hi"])"));
  EXPECT_TRUE(json_has(out_[0], R"("expected":[],"succeeded":["a"],"failed":[],"missing":[])"));
  EXPECT_TRUE(json_has(out_[1], R"("kind":"orphan")"));
  EXPECT_EQ(out_[1].status, JobStatus::succeeded);
}

TEST_F(CorrelatorTest, RunnersAndWheelsAreJobs) {
  feed("salt/run/5/new", R"({"fun": "runner.jobs.lookup_jid", "jid": "5", "user": "root", "fun_args": ["1"]})");
  feed(
      "salt/run/5/ret",
      R"({"fun": "runner.jobs.lookup_jid", "jid": "5", "user": "root", "fun_args": ["1"], "return": {}, "success": true})");
  feed("salt/wheel/6/new", R"({"fun": "wheel.key.delete", "jid": "6", "user": "alice", "fun_args": []})");
  feed("salt/wheel/6/ret",
       R"({"fun": "wheel.key.delete", "jid": "6", "user": "alice", "return": "boom", "success": false})");
  feed("salt/run/9/new", R"({"fun": "runner.state.orchestrate", "jid": "9", "user": "root", "fun_args": []})");
  ASSERT_EQ(out_.size(), 2u);
  EXPECT_EQ(out_[0].status, JobStatus::succeeded);
  EXPECT_TRUE(json_has(out_[0], R"("kind":"runner","fun":"runner.jobs.lookup_jid")"));
  EXPECT_EQ(out_[1].status, JobStatus::failed);
  EXPECT_TRUE(json_has(out_[1], R"("kind":"wheel")"));
  at(3600);  // the orchestration never returned
  const auto settled = of(JobUpdate::settled);
  ASSERT_EQ(settled.size(), 3u);
  EXPECT_EQ(settled[2].jid, "9");
  EXPECT_EQ(settled[2].status, JobStatus::missing);
}

TEST_F(CorrelatorTest, AJobThatMatchedNothingSettlesAtOnce) {
  new_job("1", "test.ping", "[]");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_TRUE(json_has(out_[0], R"("counts":{"expected":0)"));
}

TEST_F(CorrelatorTest, UnacceptedListTargetsFailAtOnce) {
  new_job("1", "test.ping", R"(["a"])", "[]", R"(, "missing": ["ghost"])");
  ret("1", "a");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].status, JobStatus::failed);
  EXPECT_TRUE(json_has(out_[0], R"({"minion":"ghost","reason":"no accepted key for this minion"})"));
}

// A master of masters (order_masters): the list target's minions sit behind a
// syndic, so the master has no key for them; they answer through it.
TEST_F(CorrelatorTest, OnAMasterOfMastersUnacceptedListTargetsAreAwaited) {
  CorrelatorConfig c;
  c.order_masters = true;
  make(c);
  new_job("1", "test.ping", "[]", "[]", R"(, "missing": ["s1"])");
  EXPECT_TRUE(out_.empty());
  feed("syndic/syn/1", R"({"minions": ["s1"]})");
  ret("1", "s1");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].status, JobStatus::succeeded);
  EXPECT_TRUE(json_has(out_[0], R"("expected":["s1"],"succeeded":["s1"],"failed":[],"missing":[])"));
}

// The master's `new` lists the syndic (a minion of this master); the syndic
// then names the minions below it, and never returns for itself.
TEST_F(CorrelatorTest, ASyndicIsReplacedByTheMinionsItPublishedTo) {
  new_job("1", "test.ping", R"(["syn", "a"])");
  feed("syndic/syn/1", R"({"minions": ["s1", "s2"]})");
  ret("1", "a");
  ret("1", "s1");
  EXPECT_TRUE(out_.empty());
  ret("1", "s2");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].status, JobStatus::succeeded);
  EXPECT_TRUE(json_has(out_[0], R"("expected":["a","s1","s2"],"succeeded":["a","s1","s2"])"));
  at(3000);  // past every deadline: nobody is missing
  EXPECT_EQ(corr->stats().missing_minions, 0u);
  // A silent minion below the syndic is missing like any other.
  new_job("2", "test.ping", R"(["syn"])");
  feed("syndic/syn/2", R"({"minions": ["s1"]})");
  at(3100);
  ASSERT_EQ(of(JobUpdate::settled).size(), 2u);
  EXPECT_EQ(of(JobUpdate::settled)[1].status, JobStatus::missing);
  EXPECT_TRUE(json_has(of(JobUpdate::settled)[1], R"("missing":["s1"])"));
}

TEST_F(CorrelatorTest, SettledJobsAreEvictedAfterTheGracePeriod) {
  new_job("1", "test.ping", R"(["a"])");
  ret("1", "a");
  EXPECT_EQ(corr->tracked_jobs(), 1u);
  at(3599);
  EXPECT_TRUE(of(JobUpdate::final).empty());
  at(3600);
  ASSERT_EQ(of(JobUpdate::final).size(), 1u);
  EXPECT_EQ(corr->tracked_jobs(), 0u);
  EXPECT_EQ(corr->stats().evicted_jobs, 0u);  // a normal end, not a cap eviction
}

TEST_F(CorrelatorTest, TheJobCapEvictsTheOldestAndCountsIt) {
  CorrelatorConfig config;
  config.max_jobs = 2;
  make(config);
  for (int i = 1; i <= 4; ++i) new_job(std::to_string(i), "test.ping", R"(["a"])");
  EXPECT_EQ(corr->tracked_jobs(), 2u);
  EXPECT_EQ(corr->stats().evicted_jobs, 2u);
  const auto finals = of(JobUpdate::final);
  ASSERT_EQ(finals.size(), 2u);
  EXPECT_EQ(finals[0].jid, "1");
  EXPECT_EQ(finals[0].status, JobStatus::missing);
}

TEST_F(CorrelatorTest, SettleAllEndsAReplay) {
  new_job("1", "state.apply", R"(["a", "b"])");
  ret("1", "a", R"("return": {}, "retcode": 0, "success": true)", "state.apply");
  corr->settle_all();
  const auto finals = of(JobUpdate::final);
  ASSERT_EQ(finals.size(), 1u);
  EXPECT_EQ(finals[0].status, JobStatus::missing);
  EXPECT_EQ(corr->tracked_jobs(), 0u);
}

TEST_F(CorrelatorTest, MinionFactsFromStartAuthAndPresence) {
  at(5);
  feed("salt/minion/a/start", R"({"id": "a", "cmd": "_minion_event", "data": "Minion a started"})");
  feed("salt/auth", R"({"id": "b", "act": "accept", "result": true})");
  feed("salt/presence/present", R"({"present": ["a", "c"]})");
  const auto& reg = corr->minions();
  ASSERT_EQ(reg.size(), 3u);
  EXPECT_EQ(reg.facts(0).last_start, kT0 + 5 * kSec);
  EXPECT_EQ(reg.facts(1).last_auth, kT0 + 5 * kSec);
  EXPECT_TRUE(reg.facts(2).present);
  EXPECT_EQ(corr->stats().minion_events, 3u);
}

TEST_F(CorrelatorTest, LostListClearsPresenceAndLeavesLastSeen) {
  at(5);
  feed("salt/presence/present", R"({"present": ["a"]})");
  at(50);
  feed("salt/presence/change", R"({"new": [], "lost": ["a"]})");
  const auto& reg = corr->minions();
  ASSERT_EQ(reg.size(), 1u);
  EXPECT_FALSE(reg.facts(0).present);
  EXPECT_EQ(reg.facts(0).last_seen, kT0 + 5 * kSec);  // heard about at 50, heard from at 5
}

TEST_F(CorrelatorTest, FindJobAnswerCountsAsSeen) {
  at(7);
  ret("9", "a", R"("return": {}, "retcode": 0, "fun_args": ["1"])", "saltutil.find_job");
  EXPECT_EQ(corr->stats().noise_events, 1u);
  EXPECT_EQ(corr->minions().facts(0).last_seen, kT0 + 7 * kSec);
}

TEST_F(CorrelatorTest, RiskAndRedactedArgsAreInTheSummary) {
  feed(
      "salt/job/1/new",
      R"({"jid": "1", "fun": "cmd.run", "arg": ["rm -rf /var/tmp/x", {"__kwarg__": true, "password": "hunter2"}], "tgt": "*", "tgt_type": "glob", "user": "alice", "minions": ["a"]})");
  ret("1", "a", R"("return": "", "retcode": 0, "success": true)", "cmd.run");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_TRUE(json_has(out_[0], R"("level":"critical")"));
  EXPECT_EQ(out_[0].json.find("hunter2"), std::string::npos);
  EXPECT_TRUE(json_has(out_[0], std::string(kRedactedMarker)));
}

TEST_F(CorrelatorTest, StateCommentsAndReasonsAreRedactedToo) {
  new_job("1", "state.apply", R"(["a"])");
  ret("1", "a",
      R"("return": {"cmd_|-db_|-mysql_|-run": {"result": false, "comment": "failed: password=hunter2", "name": "mysql", "__id__": "db", "__run_num__": 0, "changes": {}}}, "retcode": 2)",
      "state.apply");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].json.find("hunter2"), std::string::npos);
  EXPECT_TRUE(json_has(out_[0], "password=" + std::string(kRedactedMarker)));
}

// A re-run names the job it repeats in the metadata Salt copies into every
// return (not into `new`): the job carries it from its first such return.
TEST_F(CorrelatorTest, ARerunIsLinkedToItsJobByItsReturnsMetadata) {
  new_job("2", "test.arg", R"(["a"])");
  ret("2", "a", R"("return": true, "retcode": 0, "success": true, "metadata": {"salttap_rerun_of": "1"})", "test.arg");
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_TRUE(json_has(out_[0], R"("rerun_of":"1")")) << out_[0].json;

  // Nothing else is a link: no metadata, another key, not a string, not a
  // plain jid, or the job itself.
  new_job("3", "test.ping", R"(["a","b","c","d","e"])");
  ret("3", "a");
  ret("3", "b", R"("return": true, "retcode": 0, "success": true, "metadata": {"other": "1"})");
  ret("3", "c", R"("return": true, "retcode": 0, "success": true, "metadata": {"salttap_rerun_of": 1})");
  ret("3", "d", R"("return": true, "retcode": 0, "success": true, "metadata": {"salttap_rerun_of": "1; rm"})");
  ret("3", "e", R"("return": true, "retcode": 0, "success": true, "metadata": {"salttap_rerun_of": "3"})");
  ASSERT_EQ(out_.size(), 2u);
  EXPECT_FALSE(json_has(out_[1], "rerun_of")) << out_[1].json;

  // The job cache's `new` carries the publish's metadata (jobcache/cached_job.cpp):
  // linked even when no minion answered.
  new_job("4", "test.arg", R"(["a"])", "[]", R"(, "metadata": {"salttap_rerun_of": "1"})");
  at(3600);
  const auto settled = of(JobUpdate::settled);
  const auto four = std::find_if(settled.begin(), settled.end(), [](const Emitted& e) { return e.jid == "4"; });
  ASSERT_NE(four, settled.end());
  EXPECT_EQ(four->status, JobStatus::missing);
  EXPECT_TRUE(json_has(*four, R"("rerun_of":"1")")) << four->json;
}

TEST_F(CorrelatorTest, ArgumentsChangedByRedactionAreMarked) {
  Job seen;
  start({}, [&](JobUpdate, const Job& job) { seen = job; });
  // One test.arg job with these arguments, settled by its one minion's return.
  const auto run_test_arg = [&](const std::string& jid, const std::string& arg) {
    new_job(jid, "test.arg", R"(["a"])", arg);
    ret(jid, "a", salttap::testing::kReturnedTrue, "test.arg");
  };
  run_test_arg("1", R"(["x", {"__kwarg__": true, "password": "hunter2"}])");
  EXPECT_EQ(seen.jid, "1");
  EXPECT_TRUE(seen.args_redacted);
  run_test_arg("2", R"(["x", {"__kwarg__": true, "k": "v"}])");
  EXPECT_EQ(seen.jid, "2");
  EXPECT_FALSE(seen.args_redacted);
}

}  // namespace
}  // namespace salttap::correlator
