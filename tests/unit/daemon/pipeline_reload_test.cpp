// A config reload applied to `run`'s pieces (daemon/internal/pipeline_reload.h) with
// a real DocumentPipeline on a manual clock and fake alert outlets: a job
// open across the reload stays open with its minions and its deadline and
// settles as it would have; the new function filters, audit rules,
// redaction, deadlines and alert settings apply to what comes after; the
// alert outlets are rebuilt only when their settings changed, the replaced
// ones drain and keep counting in the totals.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "alerting/reloadable_outlets.h"
#include "common/metrics.h"
#include "daemon/internal/config_reload.h"
#include "daemon/internal/pipeline_reload.h"
#include "pipeline/document_pipeline.h"
#include "tests/support/events.h"

namespace salttap {
namespace {

using salttap::testing::ev;
using salttap::testing::new_job_event;

constexpr Micros kStart = 1'800'000'000 * kMicrosPerSecond;
constexpr Micros kSecond = kMicrosPerSecond;

config::Config config() {
  config::Config c = config::default_config();
  c.master_id = "m1";
  c.indexer.documents.layout.index_date = false;
  c.correlator.deadlines = {{"*", 300 * kSecond}};
  return c;
}

tap::Event job_new(const std::string& jid, const std::string& fun, const std::string& arg_json = "[]") {
  return new_job_event(jid, fun, R"(["a", "b"])", arg_json);
}
tap::Event job_ret(const std::string& jid, const std::string& minion, const std::string& fun, bool ok = true) {
  return ev("salt/job/" + jid + "/ret/" + minion, R"({"jid": ")" + jid + R"(", "id": ")" + minion + R"(", "fun": ")" +
                                                      fun + R"(", "return": true, "retcode": )" + (ok ? "0" : "1") +
                                                      R"(, "success": )" + (ok ? "true" : "false") + "}");
}

// The job documents of `jid` among `docs`.
std::vector<std::string> job_docs(const std::vector<indexer::BulkDoc>& docs, const std::string& jid) {
  std::vector<std::string> out;
  for (const auto& d : docs)
    if (d.cls == indexer::DocClass::job && d.ndjson.find(R"("jid":")" + jid + "\"") != std::string::npos)
      out.push_back(d.ndjson);
  return out;
}

struct Recording final : alerting::AlertOutlet {
  void send(const correlator::Alert& a) override { alerts.push_back(a); }
  std::vector<correlator::Alert> alerts;
};

// Builds AlertOutlets of one recording outlet each, and remembers them.
struct FakeOutletFactory {
  alerting::AlertOutlets operator()(const alerting::OutletsConfig& config) {
    alerting::AlertOutlets o;
    auto outlet = std::make_shared<Recording>();
    if (config.log) o.all.push_back(outlet);
    built.push_back(outlet);
    if (fail_next) {
      fail_next = false;
      throw std::runtime_error("cannot build");
    }
    return o;
  }
  std::vector<std::shared_ptr<Recording>> built;
  bool fail_next = false;
};

class Reload : public ::testing::Test {
 protected:
  Reload()
      : pipeline_(config(), clock_),
        outlets_(config::alert_outlets_config(config(), std::nullopt), std::ref(factory_)),
        target_(
            pipeline_, outlets_, [](const config::Config& c) { return config::alert_outlets_config(c, std::nullopt); },
            nullptr) {
    pipeline_.set_alert_outlets(outlets_.current().all);
  }

  void feed(const tap::Event& e) {
    pipeline_.advance();
    pipeline_.on_event(e);
  }
  void advance(Micros by) {
    clock_.advance(by);
    pipeline_.advance();
  }

  ManualClock clock_{kStart};
  FakeOutletFactory factory_;
  pipeline::DocumentPipeline pipeline_;
  alerting::ReloadableOutlets outlets_;
  daemon::PipelineReload target_;
};

TEST_F(Reload, AJobOpenAcrossTheReloadKeepsItsMinionsAndDeadlineAndSettlesAsBefore) {
  feed(job_new("1", "test.sleep", "[30]"));
  const Micros deadline = pipeline_.correlator().find("1")->deadline;
  EXPECT_EQ(deadline, kStart + 300 * kSecond);

  config::Config next = config();
  next.correlator.deadlines = {{"*", 10 * kSecond}};
  target_.apply(next);

  const auto open = pipeline_.correlator().find("1");
  ASSERT_TRUE(open.has_value());
  EXPECT_FALSE(open->settled);
  EXPECT_EQ(open->expected, 2u);
  EXPECT_EQ(open->pending, 2u);
  EXPECT_EQ(open->deadline, deadline) << "judged by the rules it began under";

  advance(60 * kSecond);  // past the new deadline, before its own
  EXPECT_FALSE(pipeline_.correlator().find("1")->settled);

  // A job opened after the reload gets the new deadline.
  feed(job_new("2", "test.arg"));
  EXPECT_EQ(pipeline_.correlator().find("2")->deadline, clock_.now() + 10 * kSecond);

  feed(job_ret("1", "a", "test.sleep"));
  feed(job_ret("1", "b", "test.sleep"));
  const auto done = pipeline_.correlator().find("1");
  ASSERT_TRUE(done.has_value());
  EXPECT_TRUE(done->settled);
  EXPECT_EQ(done->kind, correlator::JobKind::job);
  EXPECT_EQ(done->succeeded, 2u);
  EXPECT_EQ(done->missing, 0u);
  EXPECT_EQ(pipeline_.correlator().stats().unexpected_returns, 0u);

  advance(11 * kSecond);
  EXPECT_TRUE(pipeline_.correlator().find("2")->settled);
  EXPECT_EQ(pipeline_.correlator().find("2")->missing, 2u) << "the new deadline passed";
}

TEST_F(Reload, TheNewFunctionFiltersApplyToWhatIsBuiltAfter) {
  feed(job_new("1", "test.version"));
  feed(job_ret("1", "a", "test.version"));
  feed(job_ret("1", "b", "test.version"));
  EXPECT_FALSE(job_docs(pipeline_.take_docs(), "1").empty()) << "indexed before the reload";

  config::Config next = config();
  next.indexer.documents.functions_blacklist = {"test.version"};
  next.indexer.documents.events_exclude = {"*"};
  target_.apply(next);

  const std::uint64_t skipped = pipeline_.documents().stats().skipped_by_function;
  feed(job_new("2", "test.version"));
  feed(job_ret("2", "a", "test.version"));
  feed(job_ret("2", "b", "test.version"));
  feed(job_new("3", "test.ping"));
  const auto docs = pipeline_.take_docs();
  EXPECT_TRUE(job_docs(docs, "2").empty());
  EXPECT_FALSE(job_docs(docs, "3").empty());
  EXPECT_GT(pipeline_.documents().stats().skipped_by_function, skipped);
  EXPECT_TRUE(pipeline_.correlator().find("2")->settled) << "still followed, only not indexed";
  EXPECT_EQ(pipeline_.documents().options().master_id, "m1") << "where documents go stays";
}

TEST_F(Reload, NewAuditRulesAndRedactionApplyToJobsOpenedAfter) {
  const std::string args = R"(["flavour=vanilla"])";
  feed(job_new("1", "test.arg", args));
  EXPECT_EQ(pipeline_.correlator().find("1")->risk.level, correlator::RiskLevel::none);
  EXPECT_NE(pipeline_.correlator().find("1")->args_json.find("vanilla"), std::string::npos);

  config::Config next = config();
  next.auditor = std::make_shared<correlator::Auditor>(
      correlator::parse_audit_rules(YAML::Load(R"([{name: arg-rule, level: critical, funs: ["test.arg"]}])")));
  next.redactor = std::make_shared<correlator::Redactor>(
      correlator::parse_redaction_config(YAML::Load(R"({key_patterns: ["flavour"]})")));
  target_.apply(next);

  EXPECT_EQ(pipeline_.correlator().find("1")->risk.level, correlator::RiskLevel::none) << "assessed when it opened";
  feed(job_new("2", "test.arg", args));
  const auto job = pipeline_.correlator().find("2");
  EXPECT_EQ(job->risk.level, correlator::RiskLevel::critical);
  ASSERT_FALSE(job->risk.reasons.empty());
  EXPECT_EQ(job->risk.reasons[0], "arg-rule");
  EXPECT_EQ(job->args_json.find("vanilla"), std::string::npos) << job->args_json;
  EXPECT_NE(job->args_json.find(correlator::kRedactedMarker), std::string::npos) << job->args_json;
}

TEST_F(Reload, OutletsAreRebuiltOnlyWhenTheirSettingsChange) {
  ASSERT_EQ(factory_.built.size(), 1u);
  config::Config next = config();
  next.alerts.min_risk = correlator::RiskLevel::none;
  target_.apply(next);
  EXPECT_EQ(factory_.built.size(), 1u) << "the outlets' settings did not change";
  EXPECT_EQ(pipeline_.alerts().config().min_risk, correlator::RiskLevel::none);

  next.alert_log = false;  // a new set without the log outlet...
  target_.apply(next);
  next.alert_log = true;  // ...and back
  target_.apply(next);
  ASSERT_EQ(factory_.built.size(), 3u);

  feed(job_new("1", "test.ping"));
  feed(job_ret("1", "a", "test.ping", false));
  feed(job_ret("1", "b", "test.ping"));
  EXPECT_TRUE(factory_.built[0]->alerts.empty()) << "replaced: gets no alert";
  EXPECT_TRUE(factory_.built[1]->alerts.empty());
  ASSERT_EQ(factory_.built[2]->alerts.size(), 1u);
  EXPECT_EQ(factory_.built[2]->alerts[0].kind, correlator::AlertKind::failed);
  EXPECT_EQ(pipeline_.alerts().count(correlator::AlertKind::failed), 1u);
}

TEST_F(Reload, AnOutletThatCannotBeBuiltChangesNothing) {
  config::Config next = config();
  next.alert_log = false;
  next.indexer.documents.functions_blacklist = {"test.ping"};
  factory_.fail_next = true;
  EXPECT_THROW(target_.apply(next), std::runtime_error);
  EXPECT_EQ(outlets_.config().log, true);
  EXPECT_EQ(pipeline_.documents().options().functions_blacklist, config().indexer.documents.functions_blacklist);
}

// An async outlet that delivers at once.
class InstantOutlet final : public alerting::AsyncAlertOutlet {
 public:
  explicit InstantOutlet(std::string name)
      : AsyncAlertOutlet(std::move(name), {}, real_steady_time(), [] { return 0.5; }) {
    start();
  }
  ~InstantOutlet() override { stop(std::chrono::milliseconds(0)); }

 private:
  std::string deliver(const correlator::Alert& /*alert*/) override { return {}; }
};

TEST(ReloadableOutlets, AReplacedOutletDrainsAndKeepsCountingInItsNamesTotals) {
  int builds = 0;
  alerting::ReloadableOutlets outlets(alerting::OutletsConfig{}, [&](const alerting::OutletsConfig&) {
    ++builds;
    alerting::AlertOutlets o;
    o.webhook = std::make_shared<InstantOutlet>("webhook");
    o.all.push_back(o.webhook);
    return o;
  });
  const correlator::Alert alert{correlator::AlertKind::failed, {correlator::AlertKind::failed}, "1", "{}", 0, 0};
  outlets.current().webhook->send(alert);
  outlets.current().webhook->send(alert);

  alerting::OutletsConfig other;
  other.webhook = alerting::WebhookConfig{};
  other.webhook->url = "http://127.0.0.1:1/hook";
  EXPECT_FALSE(outlets.replace(alerting::OutletsConfig{}));
  EXPECT_TRUE(outlets.replace(other));
  EXPECT_EQ(builds, 2);
  outlets.current().webhook->send(alert);
  outlets.stop();  // the current one delivers what it holds; the replaced one has drained

  Metrics m;
  outlets.publish(m, alerting::AlertDispatcher({}));
  const std::string text = m.render();
  EXPECT_NE(text.find("salttap_alerting_deliveries_total{outlet=\"webhook\"} 3\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace salttap
