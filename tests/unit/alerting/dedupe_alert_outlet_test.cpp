// alerts.dedupe: engine (alerting/dedupe_alert_outlet.h) against a fake
// engine: the claim request, 201 delivers, 409 skips and counts, no answer
// or an error delivers anyway (fail-open), an orphan job's alert waits its
// delay on fake time, alerts about no job pass unclaimed, and stop() hands on
// what is queued.

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "alerting/dedupe_alert_outlet.h"
#include "tests/support/fake_http.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/search_json.h"

namespace salttap::alerting {
namespace {

using correlator::Alert;
using correlator::AlertKind;
using salttap::testing::FakeHttp;
using salttap::testing::FakeSteadyTime;
using salttap::testing::json_at;
using salttap::testing::parse_body;

class Recording : public AlertOutlet {
 public:
  void send(const Alert& a) override {
    std::lock_guard lock(mutex_);
    jids_.push_back(a.jid.empty() ? std::string(to_string(a.kind)) : a.jid);
    cv_.notify_all();
  }
  std::vector<std::string> await(std::size_t n) {
    std::unique_lock lock(mutex_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::seconds(30), [&] { return jids_.size() >= n; })) << "never delivered";
    return jids_;
  }
  std::size_t count() {
    std::lock_guard lock(mutex_);
    return jids_.size();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> jids_;
};

DedupeConfig config() {
  DedupeConfig c;
  c.fleet = "f1";
  c.master = "m2";
  c.orphan_delay = std::chrono::seconds(5);
  return c;
}

Alert job_alert(std::string jid, bool orphan = false) {
  Alert a;
  a.kind = AlertKind::failed;
  a.kinds = {AlertKind::failed};
  a.jid = std::move(jid);
  a.json = "{}";
  a.started_at = 1'796'000'000 * kMicrosPerSecond;
  a.settled_at = a.started_at + kMicrosPerSecond;
  a.orphan = orphan;
  return a;
}

struct Rig {
  FakeHttp engine;
  FakeSteadyTime time;
  std::shared_ptr<Recording> out = std::make_shared<Recording>();
  std::unique_ptr<DedupeAlertOutlet> dedupe;
  explicit Rig(long status) : engine([status](const http::HttpRequest&) { return FakeHttp::reply(status); }) {
    dedupe = std::make_unique<DedupeAlertOutlet>(std::vector<std::shared_ptr<AlertOutlet>>{out}, engine.client(),
                                                 config(), time);
  }
};

TEST(AlertDedupe, TheClaimIsOneCreateOfTheJobsDocumentInTheAlertsIndexOfItsDay) {
  const auto r = claim_request(job_alert("20261206041500123456"), config());
  EXPECT_EQ(r.method, "PUT");
  EXPECT_EQ(r.path, "/salt-alerts-2026.12.06/_create/f1%2Fjob%2F20261206041500123456");
  const auto body = parse_body(r.body);
  EXPECT_EQ(json_at(body, "/fleet"), "f1");
  EXPECT_EQ(json_at(body, "/master"), "m2");
  EXPECT_EQ(json_at(body, "/salttap/doc"), "alert_claims");
  EXPECT_EQ(json_at(body, "/claim/key"), "20261206041500123456");
  EXPECT_EQ(json_at(body, "/jid"), "<absent>") << "a claim is no alert: searches of alerts by jid must not find it";
  EXPECT_EQ(json_at(body, "/alert"), "<absent>");
}

TEST(AlertDedupe, OnlyJobAlertsAreClaimed) {
  Alert spool;
  spool.kind = AlertKind::spool_full;
  EXPECT_EQ(claim_id(spool, "f1"), "");
  Alert silent;
  silent.kind = AlertKind::minion_silent;
  silent.jid = "";
  EXPECT_EQ(claim_id(silent, "f1"), "");
  Alert risky = job_alert("1");
  risky.kind = AlertKind::risky;
  EXPECT_EQ(claim_id(risky, "f1"), "f1/job/1") << "one claim per job, whatever kind this master found first";
}

TEST(AlertDedupe, Created201IsDelivered) {
  Rig rig(201);
  rig.dedupe->send(job_alert("20261206041500000001"));
  EXPECT_EQ(rig.out->await(1), std::vector<std::string>{"20261206041500000001"});
  EXPECT_EQ(rig.dedupe->stats().claimed, 1u);
  EXPECT_EQ(rig.engine.requests().size(), 1u);
}

TEST(AlertDedupe, Conflict409IsAnotherSalttapsAndNotDelivered) {
  Rig rig(409);
  rig.dedupe->send(job_alert("20261206041500000001"));
  Alert spool;
  spool.kind = AlertKind::spool_full;
  rig.dedupe->send(spool);  // behind it in the queue: once it arrives, the job's alert was decided
  EXPECT_EQ(rig.out->await(1), std::vector<std::string>{"spool_full"});
  rig.dedupe->stop();
  EXPECT_EQ(rig.out->count(), 1u);
  EXPECT_EQ(rig.dedupe->stats().duplicates, 1u);
  EXPECT_EQ(rig.dedupe->stats().passed, 1u);
  EXPECT_EQ(rig.engine.requests().size(), 1u) << "the spool_full alert is not claimed";
}

TEST(AlertDedupe, NoAnswerOrAnErrorIsDeliveredAnyway) {
  for (const long status : {0L, 503L, 400L}) {
    Rig rig(status);
    rig.dedupe->send(job_alert("20261206041500000001"));
    EXPECT_EQ(rig.out->await(1).size(), 1u) << status;
    EXPECT_EQ(rig.dedupe->stats().failed_open, 1u) << status;
  }
}

TEST(AlertDedupe, AnOrphanJobsAlertWaitsItsDelaySoThePublisherGoesFirst) {
  Rig rig(201);
  rig.dedupe->send(job_alert("20261206041500000001", true));
  rig.time.await_waiters(1);
  rig.dedupe->send(job_alert("20261206041500000002"));  // a job of this master's: at once
  EXPECT_EQ(rig.out->await(1), std::vector<std::string>{"20261206041500000002"});
  EXPECT_EQ(rig.engine.requests().size(), 1u) << "the orphan's claim waits";
  rig.time.await_waiters(1);
  rig.time.advance(std::chrono::seconds(4));
  rig.time.await_waiters(1);
  EXPECT_EQ(rig.out->count(), 1u) << "4 s of 5";
  rig.time.advance(std::chrono::seconds(1));
  EXPECT_EQ(rig.out->await(2).back(), "20261206041500000001");
}

TEST(AlertDedupe, StopHandsOnWhatIsQueuedWithoutWaitingOutTheDelay) {
  Rig rig(201);
  rig.dedupe->send(job_alert("20261206041500000001", true));
  rig.time.await_waiters(1);
  rig.dedupe->stop(std::chrono::milliseconds(1000));
  EXPECT_EQ(rig.out->count(), 1u);
  EXPECT_EQ(rig.dedupe->stats().claimed, 1u);
}

}  // namespace
}  // namespace salttap::alerting
