// Alerts: one per job, the payload, the dispatcher's fan-out and counts, the
// spool-full alert, and the alerts index as an outlet.

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include "alerting/alert_dispatcher.h"
#include "alerting/index_alert_outlet.h"
#include "alerting/spool_full_alert.h"
#include "alerting/tap_journal_alert.h"
#include "correlator/correlator.h"
#include "tests/support/events.h"

namespace salttap::alerting {
namespace {

using correlator::Alert;
using correlator::AlertConfig;
using correlator::AlertKind;
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
  std::unique_ptr<correlator::Correlator> corr;
  explicit Harness(AlertConfig config = {}) : dispatcher(config, "master-1") {
    dispatcher.add(outlet);
    corr = std::make_unique<correlator::Correlator>(
        correlator::CorrelatorConfig{}, clock,
        [this](correlator::JobUpdate u, const correlator::Job& j) { dispatcher.on_job(u, j, corr->minions()); },
        std::make_shared<correlator::Auditor>(correlator::Auditor::default_rules()),
        std::make_shared<correlator::Redactor>());
  }
  void feed(const std::string& tag, const std::string& data) { corr->on_event(ev(tag, data)); }
};

rapidjson::Document parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  EXPECT_FALSE(d.HasParseError()) << json;
  return d;
}

TEST(Alerts, OneAlertPerJobWithCappedListsAndExactCounts) {
  AlertConfig config;
  config.list_cap = 3;
  Harness h(config);
  std::string minions = "[";
  for (int i = 0; i < 10; ++i) minions += (i ? ",\"m" : "\"m") + std::to_string(i) + "\"";
  minions += "]";
  h.feed(
      "salt/job/1/new",
      R"({"jid": "1", "fun": "cmd.run", "arg": ["false"], "tgt": "*", "tgt_type": "glob", "user": "bob", "minions": )" +
          minions + "}");
  for (int i = 0; i < 8; ++i)
    h.feed("salt/job/1/ret/m" + std::to_string(i),
           R"({"fun": "cmd.run", "return": "", "retcode": 1, "success": false})");
  h.clock.advance(900 * kMicrosPerSecond);
  h.corr->advance();
  ASSERT_EQ(h.outlet->alerts.size(), 1u) << "one alert per job, not per minion";
  const Alert& a = h.outlet->alerts[0];
  EXPECT_EQ(a.kind, AlertKind::failed);
  EXPECT_EQ(a.kinds, (std::vector<AlertKind>{AlertKind::failed, AlertKind::missing, AlertKind::risky}));
  const auto d = parse(a.json);
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
  h.feed(
      "salt/job/1/new",
      R"({"jid": "1", "fun": "test.ping", "arg": [], "tgt": "*", "tgt_type": "glob", "user": "root", "minions": ["a"]})");
  h.feed("salt/job/1/ret/a", R"({"fun": "test.ping", "return": true, "retcode": 0, "success": true})");
  EXPECT_TRUE(h.outlet->alerts.empty());
}

TEST(Alerts, RiskThresholdIsConfigurable) {
  AlertConfig config;
  config.min_risk = correlator::RiskLevel::medium;
  Harness h(config);
  h.feed(
      "salt/job/1/new",
      R"({"jid": "1", "fun": "state.apply", "arg": [], "tgt": "*", "tgt_type": "glob", "user": "root", "minions": ["a"]})");
  h.feed("salt/job/1/ret/a", R"({"fun": "state.apply", "return": {}, "retcode": 0, "success": true})");
  ASSERT_EQ(h.outlet->alerts.size(), 1u);
  EXPECT_EQ(h.outlet->alerts[0].kind, AlertKind::risky);
}

// What the remediation reactor reads (docs/remediation.md): the arguments
// as published, whether redaction changed them, and the link of a re-run.
TEST(Alerts, ThePayloadSaysWhetherArgsAreAsPublishedAndWhatARerunRepeats) {
  Harness h;
  h.feed(
      "salt/job/1/new",
      R"({"jid": "1", "fun": "test.arg", "arg": ["a", {"__kwarg__": true, "k": "v"}], "tgt": "*", "tgt_type": "glob", "user": "root", "minions": ["a", "b"]})");
  h.feed("salt/job/1/ret/a", R"({"fun": "test.arg", "return": "", "retcode": 1, "success": false})");
  h.feed("salt/job/1/ret/b", R"({"fun": "test.arg", "return": "", "retcode": 0, "success": true})");
  h.feed(
      "salt/job/2/new",
      R"({"jid": "2", "fun": "test.arg", "arg": ["a", {"__kwarg__": true, "k": "v"}], "tgt": "a", "tgt_type": "list", "user": "root", "minions": ["a"]})");
  h.feed("salt/job/2/ret/a",
         R"({"fun": "test.arg", "return": "", "retcode": 1, "success": false, "metadata": {"salttap_rerun_of": "1"}})");
  h.feed(
      "salt/job/3/new",
      R"({"jid": "3", "fun": "test.arg", "arg": [{"__kwarg__": true, "password": "hunter2"}], "tgt": "*", "tgt_type": "glob", "user": "root", "minions": ["a"]})");
  h.feed("salt/job/3/ret/a", R"({"fun": "test.arg", "return": "", "retcode": 1, "success": false})");
  ASSERT_EQ(h.outlet->alerts.size(), 3u);

  const auto first = parse(h.outlet->alerts[0].json);
  EXPECT_EQ(first["args"].Size(), 2u);
  EXPECT_STREQ(first["args"][1]["k"].GetString(), "v");
  EXPECT_FALSE(first.HasMember("args_redacted")) << h.outlet->alerts[0].json;
  EXPECT_FALSE(first.HasMember("rerun_of"));
  EXPECT_EQ(first["failed"].Size(), 1u);
  EXPECT_STREQ(first["failed"][0].GetString(), "a");
  EXPECT_STREQ(first["risk"]["level"].GetString(), "none");

  const auto rerun = parse(h.outlet->alerts[1].json);
  ASSERT_TRUE(rerun.HasMember("rerun_of")) << h.outlet->alerts[1].json;
  EXPECT_STREQ(rerun["rerun_of"].GetString(), "1");

  const auto secret = parse(h.outlet->alerts[2].json);
  EXPECT_EQ(h.outlet->alerts[2].json.find("hunter2"), std::string::npos);
  ASSERT_TRUE(secret.HasMember("args_redacted")) << h.outlet->alerts[2].json;
  EXPECT_TRUE(secret["args_redacted"].GetBool());
}

TEST(SpoolFullAlert, IsDispatchedToEveryOutletAndCounted) {
  AlertDispatcher dispatcher({}, "master-1");
  auto first = std::make_shared<RecordingOutlet>();
  auto second = std::make_shared<RecordingOutlet>();
  dispatcher.add(first);
  dispatcher.add(second);
  indexer::SpoolConfig spool;
  spool.max_bytes = 1000;
  dispatcher.dispatch(make_spool_full_alert("master-1", 1'800'000'000 * kMicrosPerSecond, 900, spool));
  ASSERT_EQ(first->alerts.size(), 1u);
  ASSERT_EQ(second->alerts.size(), 1u);
  EXPECT_EQ(dispatcher.count(AlertKind::spool_full), 1u);
  const Alert& a = first->alerts[0];
  EXPECT_TRUE(a.jid.empty());
  const auto d = parse(a.json);
  EXPECT_STREQ(d["alert"].GetString(), "spool_full");
  EXPECT_STREQ(d["master"].GetString(), "master-1");
  EXPECT_STREQ(d["settled_at"].GetString(), "2027-01-15T08:00:00.000000Z");
  EXPECT_STREQ(d["lane"].GetString(), "live");
  EXPECT_EQ(d["spool_bytes"].GetUint64(), 900u);
  EXPECT_EQ(d["spool_max_bytes"].GetUint64(), 1000u);
}

TEST(SpoolFullAlert, TheBackfillLanesAlertNamesItsLane) {
  indexer::SpoolConfig spool;
  spool.max_bytes = 250;
  const auto d = parse(
      make_spool_full_alert("master-1", 1'800'000'000 * kMicrosPerSecond, 240, spool, indexer::Lane::backfill).json);
  EXPECT_STREQ(d["alert"].GetString(), "spool_full");
  EXPECT_STREQ(d["lane"].GetString(), "backfill");
  EXPECT_EQ(d["spool_bytes"].GetUint64(), 240u);
  EXPECT_EQ(d["spool_max_bytes"].GetUint64(), 250u);
  EXPECT_EQ(std::string(d["reason"].GetString()),
            "backfill lane (documents from the job cache): the engine is not taking documents: raw events are "
            "refused above 80% of max_bytes, states above 90%; job, return and alert documents wait");
}

TEST(SpoolFullAlert, TheReasonStatesTheConfiguredLimits) {
  indexer::SpoolConfig spool;  // the defaults: 0.8 and 0.9
  EXPECT_EQ(spool_full_reason(spool),
            "the engine is not taking documents: raw events are refused above 80% of max_bytes, states above 90%; "
            "job, return and alert documents wait");
  spool.events_limit = 0.5;
  spool.states_limit = 0.755;
  EXPECT_EQ(spool_full_reason(spool),
            "the engine is not taking documents: raw events are refused above 50% of max_bytes, states above "
            "75.5%; job, return and alert documents wait");
  spool.events_limit = spool.states_limit = 1;
  const auto d = parse(make_spool_full_alert("m", 0, 1, spool).json);
  EXPECT_NE(std::string(d["reason"].GetString()).find("above 100% of max_bytes, states above 100%;"), std::string::npos)
      << d["reason"].GetString();
}

TEST(TapJournalAlert, SaysWhatWasLostAndWhy) {
  AlertDispatcher dispatcher({}, "master-1");
  auto outlet = std::make_shared<RecordingOutlet>();
  dispatcher.add(outlet);
  tap::JournalConfig config;
  config.max_bytes = 4096;
  tap::JournalStats stats;
  stats.bytes = 4000;
  stats.dropped_full = 7;
  stats.dropped_error = 2;
  dispatcher.dispatch(make_tap_journal_alert("master-1", 1'800'000'000 * kMicrosPerSecond, stats, config));
  ASSERT_EQ(outlet->alerts.size(), 1u);
  EXPECT_EQ(dispatcher.count(AlertKind::tap_journal_full), 1u);
  EXPECT_TRUE(outlet->alerts[0].jid.empty());
  const auto d = parse(outlet->alerts[0].json);
  EXPECT_STREQ(d["alert"].GetString(), "tap_journal_full");
  EXPECT_STREQ(d["kinds"][0].GetString(), "tap_journal_full");
  EXPECT_EQ(d["journal_bytes"].GetUint64(), 4000u);
  EXPECT_EQ(d["journal_max_bytes"].GetUint64(), 4096u);
  EXPECT_EQ(d["dropped_events"].GetUint64(), 9u);
  EXPECT_EQ(std::string(d["reason"].GetString()).rfind("the tap journal reached max_bytes (4096): ", 0), 0u)
      << d["reason"].GetString();
  stats.refused_for_error = true;
  EXPECT_EQ(tap_journal_reason(stats, config).rfind("a write to the tap journal failed", 0), 0u);
}

TEST(IndexAlertOutlet, EachAlertIsOneDocumentOfTheAlertsIndex) {
  ManualClock clock{1'800'000'000 * kMicrosPerSecond};
  indexer::DocumentOptions options;
  options.master_id = "m1";
  options.layout.index_date = false;
  indexer::DocumentBuilder builder(options, std::make_shared<correlator::Redactor>(), clock);
  AlertDispatcher dispatcher({}, "m1");
  dispatcher.add(std::make_shared<IndexAlertOutlet>(builder));
  dispatcher.dispatch(make_spool_full_alert("m1", clock.now(), 10, indexer::SpoolConfig{}));
  const auto docs = builder.take_docs();
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].cls, indexer::DocClass::alert);
  EXPECT_NE(docs[0].ndjson.find(R"("_index":"salt-alerts")"), std::string::npos) << docs[0].ndjson;
  EXPECT_NE(docs[0].ndjson.find(R"("alert":"spool_full")"), std::string::npos) << docs[0].ndjson;
}

}  // namespace
}  // namespace salttap::alerting
