// `salttap watch --jobs` filters, on jobs the correlator built from real captures.

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/internal/event_filter.h"
#include "cli/internal/job_filter.h"
#include "common/clock.h"
#include "correlator/correlator.h"
#include "tests/support/capture_events.h"
#include "tests/support/events.h"

namespace salttap {
namespace {

using salttap::testing::capture_events;

using correlator::Job;
using correlator::JobKind;

// Events through the correlator as `replay` does it (on the events' own time);
// every job in its final form, by jid.
class Correlated {
 public:
  explicit Correlated(const std::vector<tap::Event>& events)
      : corr_(correlator::CorrelatorConfig{}, clock_, [this](correlator::JobUpdate update, const Job& job) {
          if (update == correlator::JobUpdate::final) jobs_.insert_or_assign(job.jid, job);
        }) {
    for (const tap::Event& e : events) {
      if (auto stamp = e.string_field("_stamp"))
        if (auto t = parse_salt_stamp(*stamp); t && *t > clock_.now()) clock_.set(*t);
      corr_.advance();
      corr_.on_event(e);
    }
    corr_.settle_all();
  }

  const std::map<std::string, Job>& jobs() const { return jobs_; }
  const Job& only(JobKind kind, const std::string& fun) const {
    const Job* found = nullptr;
    for (const auto& [jid, job] : jobs_) {
      if (job.kind != kind || job.fun != fun) continue;
      EXPECT_EQ(found, nullptr) << "two " << fun << " jobs";
      found = &job;
    }
    if (!found) throw std::runtime_error("no " + fun + " job");
    return *found;
  }
  bool matches(const cli::JobFilter& f, const Job& job) const { return f.matches(job, corr_.minions()); }
  // jids of the jobs `f` selects
  std::vector<std::string> selected(const cli::JobFilter& f) const {
    std::vector<std::string> out;
    for (const auto& [jid, job] : jobs_)
      if (matches(f, job)) out.push_back(jid);
    return out;
  }

 private:
  ManualClock clock_;
  std::map<std::string, Job> jobs_;
  correlator::Correlator corr_;
};

TEST(JobFilter, EmptySelectsEveryJob) {
  const Correlated c(capture_events("salt-3006.25/runner_manage_up.raw"));
  ASSERT_EQ(c.jobs().size(), 2u);  // the runner and the test.ping it published
  EXPECT_EQ(c.selected({}).size(), 2u);
}

// The reason the filters select jobs: a job's `new` event names no minion, so
// filtering events by minion loses it and the returns make an orphan of it.
TEST(JobFilter, MinionSelectsTheWholeJobWhereTheEventFilterTearsItApart) {
  cli::EventFilter by_event;
  by_event.minions = {"minion-a"};
  std::vector<tap::Event> filtered;
  for (auto& e : capture_events("salt-3006.26/test_ping.raw"))
    if (by_event.matches(e)) filtered.push_back(std::move(e));
  const Correlated torn(filtered);
  ASSERT_EQ(torn.jobs().size(), 1u);
  EXPECT_EQ(torn.jobs().begin()->second.kind, JobKind::orphan);
  EXPECT_EQ(torn.jobs().begin()->second.tgt, "");

  const Correlated c(capture_events("salt-3006.26/test_ping.raw"));
  const Job& ping = c.only(JobKind::job, "test.ping");
  EXPECT_EQ(ping.tgt, "*");
  EXPECT_EQ(ping.succeeded, 2u);
  for (const char* glob : {"minion-a", "minion-b", "minion-?", "*-b"}) {
    cli::JobFilter f;
    f.minions = {glob};
    EXPECT_TRUE(c.matches(f, ping)) << glob;
  }
  cli::JobFilter other;
  other.minions = {"minion-c", "web*"};
  EXPECT_FALSE(c.matches(other, ping));
}

TEST(JobFilter, MinionThatNeverReturnedStillSelectsTheJob) {
  const Correlated c(capture_events("salt-3006.25/minion_down_missing_return.raw"));
  const Job& ping = c.only(JobKind::job, "test.ping");
  ASSERT_EQ(ping.missing, 1u);
  cli::JobFilter f;
  f.minions = {"minion-b"};
  EXPECT_TRUE(c.matches(f, ping));
}

TEST(JobFilter, MinionThatReturnedUnannouncedSelectsTheJob) {
  // A minion schedule: returns only, no `new`, nobody was expected.
  const Correlated c(capture_events("salt-3006.25/scheduled_job.raw"));
  cli::JobFilter f;
  f.minions = {"minion-a"};
  f.funs = {"cmd.run"};
  const auto jids = c.selected(f);
  ASSERT_EQ(jids.size(), 2u);
  for (const auto& jid : jids) EXPECT_EQ(c.jobs().at(jid).kind, JobKind::scheduled);
  f.minions = {"minion-b"};
  EXPECT_TRUE(c.selected(f).empty());
}

TEST(JobFilter, RunnerJobsHaveNoMinions) {
  const Correlated c(capture_events("salt-3006.25/runner_manage_up.raw"));
  cli::JobFilter f;
  f.minions = {"*"};
  const auto jids = c.selected(f);
  ASSERT_EQ(jids.size(), 1u);
  EXPECT_EQ(c.jobs().at(jids[0]).fun, "test.ping");
  cli::JobFilter runner;
  runner.funs = {"runner.manage.*"};
  ASSERT_EQ(c.selected(runner).size(), 1u);
  EXPECT_EQ(c.jobs().at(c.selected(runner)[0]).kind, JobKind::runner);
}

TEST(JobFilter, FunUserJidAndTargetAreTheJobsOwn) {
  const Correlated c(capture_events("salt-3006.26/test_arg_compound.raw"));
  const Job& job = c.only(JobKind::job, "test.arg");
  ASSERT_EQ(job.tgt, "G@id:minion-a or minion-b");
  const auto selects = [&](auto field, std::vector<std::string> globs) {
    cli::JobFilter f;
    f.*field = std::move(globs);
    return c.matches(f, job);
  };
  EXPECT_TRUE(selects(&cli::JobFilter::funs, {"test.arg"}));
  EXPECT_TRUE(selects(&cli::JobFilter::funs, {"cmd.*", "test.*"}));  // repeated: any
  EXPECT_FALSE(selects(&cli::JobFilter::funs, {"test.ping"}));
  EXPECT_TRUE(selects(&cli::JobFilter::users, {"ro*"}));
  EXPECT_FALSE(selects(&cli::JobFilter::users, {"alice"}));
  EXPECT_TRUE(selects(&cli::JobFilter::jids, {job.jid}));
  EXPECT_TRUE(selects(&cli::JobFilter::jids, {"2026112919*"}));
  EXPECT_FALSE(selects(&cli::JobFilter::jids, {"2025*"}));
  EXPECT_TRUE(selects(&cli::JobFilter::tgts, {"G@id:minion-a or minion-b"}));
  EXPECT_TRUE(selects(&cli::JobFilter::tgts, {"G@id:*"}));
  // A compound target is one expression: its words are not targets of their own.
  EXPECT_FALSE(selects(&cli::JobFilter::tgts, {"minion-b"}));
  EXPECT_TRUE(selects(&cli::JobFilter::tgts, {"*"}));

  cli::JobFilter all;  // different options: all must match
  all.funs = {"test.arg"};
  all.minions = {"minion-a"};
  all.users = {"root"};
  all.tgts = {"G@*"};
  EXPECT_TRUE(c.matches(all, job));
  all.users = {"alice"};
  EXPECT_FALSE(c.matches(all, job));
}

TEST(JobFilter, GlobTargetMatchesAsPublished) {
  const Correlated c(capture_events("salt-3006.25/test_ping.raw"));
  const Job& ping = c.only(JobKind::job, "test.ping");
  cli::JobFilter f;
  f.tgts = {"*"};
  EXPECT_TRUE(c.matches(f, ping));
  f.tgts = {"minion-a"};  // the target is the glob '*', not the minions it matched
  EXPECT_FALSE(c.matches(f, ping));
}

TEST(JobFilter, ListsMatchByEntry) {
  // A multi-function job on a list target (no capture has one).
  using salttap::testing::ev;
  std::vector<tap::Event> events;
  events.push_back(ev("salt/job/20261129192428536894/new",
                      R"({"jid": "20261129192428536894", "fun": ["test.ping", "test.echo"], "arg": [[], ["hi"]],
                          "tgt": ["web1", "db1"], "tgt_type": "list", "user": "root", "minions": ["web1", "db1"],
                          "_stamp": "2026-11-29T19:24:28.536894"})"));
  const Correlated c(events);
  const Job& job = c.jobs().at("20261129192428536894");
  ASSERT_EQ(job.fun, "test.ping,test.echo");
  ASSERT_EQ(job.tgt, "web1,db1");
  cli::JobFilter f;
  f.funs = {"test.echo"};
  EXPECT_TRUE(c.matches(f, job));
  f.funs = {"test.e*"};
  EXPECT_TRUE(c.matches(f, job));
  f.funs = {"test.ping,test.echo"};  // entries, as the event filter matches a list `fun`
  EXPECT_FALSE(c.matches(f, job));
  cli::JobFilter t;
  t.tgts = {"db1"};
  EXPECT_TRUE(c.matches(t, job));
  t.tgts = {"web1,db1"};  // the whole list as published
  EXPECT_TRUE(c.matches(t, job));
  t.tgts = {"mail*"};
  EXPECT_FALSE(c.matches(t, job));
  cli::JobFilter m;  // both expected, neither returned: still the job's minions
  m.minions = {"db1"};
  EXPECT_TRUE(c.matches(m, job));
}

}  // namespace
}  // namespace salttap
