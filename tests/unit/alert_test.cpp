// Alerts: one per job, the payload, and outlets that never block.

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include "correlator/alert_outlets.h"
#include "correlator/correlator.h"
#include "tests/support/events.h"
#include "tests/support/http_receiver.h"

namespace salttap::correlator {
namespace {

using namespace std::chrono_literals;
using salttap::testing::ev;

// Runs a job through a correlator and returns what the dispatcher sent.
class RecordingOutlet : public AlertOutlet {
 public:
  void send(const Alert& a) override { alerts.push_back(a); }
  std::vector<Alert> alerts;
};

struct Harness {
  ManualClock clock{1'800'000'000 * kMicrosPerSecond};
  std::shared_ptr<RecordingOutlet> outlet = std::make_shared<RecordingOutlet>();
  AlertDispatcher dispatcher;
  std::unique_ptr<Correlator> corr;
  explicit Harness(AlertConfig config = {}) : dispatcher(config, "master-1") {
    dispatcher.add(outlet);
    corr = std::make_unique<Correlator>(
        CorrelatorConfig{}, clock, [this](JobUpdate u, const Job& j) { dispatcher.on_job(u, j, corr->minions()); },
        std::make_shared<Auditor>(Auditor::default_rules()), std::make_shared<Redactor>());
  }
  void feed(const std::string& tag, const std::string& data) { corr->on_event(ev(tag, data)); }
};

TEST(Alerts, OneAlertPerJobWithCappedListsAndExactCounts) {
  AlertConfig config;
  config.list_cap = 3;
  Harness h(config);
  std::string minions = "[";
  for (int i = 0; i < 10; ++i) minions += (i ? ",\"m" : "\"m") + std::to_string(i) + "\"";
  minions += "]";
  h.feed("salt/job/1/new", R"({"jid": "1", "fun": "cmd.run", "arg": ["false"], "tgt": "*", "tgt_type": "glob", "user": "bob", "minions": )" + minions + "}");
  for (int i = 0; i < 8; ++i)
    h.feed("salt/job/1/ret/m" + std::to_string(i), R"({"fun": "cmd.run", "return": "", "retcode": 1, "success": false})");
  h.clock.advance(900 * kMicrosPerSecond);
  h.corr->advance();
  ASSERT_EQ(h.outlet->alerts.size(), 1u) << "one alert per job, not per minion";
  const Alert& a = h.outlet->alerts[0];
  EXPECT_EQ(a.kind, AlertKind::failed);
  EXPECT_EQ(a.kinds, (std::vector<AlertKind>{AlertKind::failed, AlertKind::missing, AlertKind::risky}));
  rapidjson::Document d;
  d.Parse(a.json.c_str());
  ASSERT_FALSE(d.HasParseError());
  EXPECT_STREQ(d["master"].GetString(), "master-1");
  EXPECT_STREQ(d["user"].GetString(), "bob");
  EXPECT_EQ(d["counts"]["failed"].GetUint(), 8u);
  EXPECT_EQ(d["counts"]["missing"].GetUint(), 2u);
  EXPECT_EQ(d["failed"].Size(), 3u);
  EXPECT_EQ(d["missing"].Size(), 2u);
  EXPECT_STREQ(d["risk"]["level"].GetString(), "high");
  EXPECT_EQ(h.dispatcher.count(AlertKind::failed), 1u);

  // A late return updates the job but does not alert again.
  h.feed("salt/job/1/ret/m9", R"({"fun": "cmd.run", "return": "", "retcode": 0, "success": true})");
  EXPECT_EQ(h.outlet->alerts.size(), 1u);
}

TEST(Alerts, QuietJobsDoNotAlert) {
  Harness h;
  h.feed("salt/job/1/new", R"({"jid": "1", "fun": "test.ping", "arg": [], "tgt": "*", "tgt_type": "glob", "user": "root", "minions": ["a"]})");
  h.feed("salt/job/1/ret/a", R"({"fun": "test.ping", "return": true, "retcode": 0, "success": true})");
  EXPECT_TRUE(h.outlet->alerts.empty());
}

TEST(Alerts, RiskThresholdIsConfigurable) {
  AlertConfig config;
  config.min_risk = RiskLevel::medium;
  Harness h(config);
  h.feed("salt/job/1/new", R"({"jid": "1", "fun": "state.apply", "arg": [], "tgt": "*", "tgt_type": "glob", "user": "root", "minions": ["a"]})");
  h.feed("salt/job/1/ret/a", R"({"fun": "state.apply", "return": {}, "retcode": 0, "success": true})");
  ASSERT_EQ(h.outlet->alerts.size(), 1u);
  EXPECT_EQ(h.outlet->alerts[0].kind, AlertKind::risky);
}

TEST(Alerts, SpoolFullIsDispatchedToEveryOutletAndCounted) {
  AlertDispatcher dispatcher({}, "master-1");
  auto outlet = std::make_shared<RecordingOutlet>();
  dispatcher.add(outlet);
  dispatcher.dispatch(make_spool_full_alert("master-1", 1'800'000'000 * kMicrosPerSecond, 900, 1000, "events refused"));
  ASSERT_EQ(outlet->alerts.size(), 1u);
  EXPECT_EQ(dispatcher.count(AlertKind::spool_full), 1u);
  const Alert& a = outlet->alerts[0];
  EXPECT_TRUE(a.jid.empty());
  rapidjson::Document d;
  d.Parse(a.json.c_str());
  ASSERT_FALSE(d.HasParseError()) << a.json;
  EXPECT_STREQ(d["alert"].GetString(), "spool_full");
  EXPECT_STREQ(d["master"].GetString(), "master-1");
  EXPECT_EQ(d["spool_bytes"].GetUint64(), 900u);
  EXPECT_EQ(d["spool_max_bytes"].GetUint64(), 1000u);
}

TEST(WebhookOutlet, RetriesUntilTheReceiverAcceptsWithoutBlockingTheCaller) {
  salttap::testing::HttpReceiver receiver({500, 503});
  WebhookConfig config;
  config.url = receiver.url();
  config.retry.initial = 10ms;
  config.retry.max = 50ms;
  WebhookAlertOutlet outlet(config);
  const Alert alert{AlertKind::failed, {AlertKind::failed}, "123", R"({"alert":"failed","jid":"123"})"};
  const auto t0 = std::chrono::steady_clock::now();
  outlet.send(alert);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 50ms) << "send() must not wait for HTTP";
  for (int i = 0; i < 500 && outlet.stats().delivered == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(outlet.stats().delivered.load(), 1u);
  EXPECT_EQ(outlet.stats().attempts.load(), 3u);
  EXPECT_EQ(outlet.stats().retries.load(), 2u);
  const auto bodies = receiver.bodies();
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[2], alert.json);
}

TEST(WebhookOutlet, GivesUpAfterMaxAttemptsAndCountsIt) {
  WebhookConfig config;
  config.url = "http://127.0.0.1:1/unreachable";
  config.retry.initial = 1ms;
  config.retry.max = 2ms;
  config.retry.max_attempts = 3;
  WebhookAlertOutlet outlet(config);
  outlet.send({AlertKind::missing, {AlertKind::missing}, "9", "{}"});
  for (int i = 0; i < 500 && outlet.stats().gave_up == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(outlet.stats().gave_up.load(), 1u);
  EXPECT_EQ(outlet.stats().attempts.load(), 3u);
}

TEST(WebhookOutlet, AFullQueueDropsAndCounts) {
  WebhookConfig config;
  config.url = "http://127.0.0.1:1/unreachable";
  config.retry.initial = 1000ms;
  config.retry.queue_cap = 2;
  WebhookAlertOutlet outlet(config);
  for (int i = 0; i < 10; ++i) outlet.send({AlertKind::failed, {AlertKind::failed}, std::to_string(i), "{}"});
  EXPECT_GE(outlet.stats().dropped_queue_full.load(), 7u);
  outlet.stop(0ms);
}

}  // namespace
}  // namespace salttap::correlator
