// Reloading the config (daemon/internal/config_reload.h) with a fake target and
// real files read by load_config: what a reload takes from the file, what it
// keeps and names as needing a restart, that a file that does not load (or a
// target that refuses) changes nothing and is logged with the file's path
// and counted, and the two metrics.

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/metrics.h"
#include "daemon/internal/config_reload.h"
#include "tests/support/log_capture.h"
#include "tests/support/spool_fixtures.h"

namespace salttap {
namespace {

using testing::LogCapture;

constexpr Micros kNow = 1'800'000'000 * kMicrosPerSecond;

const char* const kFirst = R"(
master_id: m1
correlator:
  deadlines: [{fun: "test.sleep", seconds: 300}, {fun: "*", seconds: 900}]
audit:
  rules: [{name: first-rule, level: high, funs: ["cmd.*"]}]
redaction:
  key_patterns: ["passw(or)?d"]
alerts: {min_risk: high}
checkpoint: {interval_seconds: 10}
indexer:
  hosts: ["http://127.0.0.1:9200"]
  functions_blacklist: [saltutil.find_job]
  events: {exclude: ["salt/job/*"]}
  spool: {dir: /var/lib/salttap/spool}
)";

// Every reloadable setting and some that need a restart changed.
const char* const kSecond = R"(
master_id: m2
correlator:
  deadlines: [{fun: "*", seconds: 60}]
  noise_funs: [saltutil.find_job]
audit:
  default_rules: false
  rules: [{name: second-rule, level: critical, funs: ["test.arg"]}]
redaction:
  key_patterns: ["flavour"]
alerts:
  min_risk: low
  log: false
  webhook: {url: "http://127.0.0.1:1/hook"}
checkpoint: {interval_seconds: 20}
reconcile: {enabled: false}
indexer:
  hosts: ["http://127.0.0.1:9201"]
  functions_blacklist: [test.version]
  functions_whitelist: ["test.*"]
  events: {enabled: false}
  text_cap_bytes: 4096
  spool: {dir: /var/lib/salttap/other-spool}
)";

class Files {
 public:
  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_.path() / name;
    std::ofstream(path) << text;
    return path.string();
  }

 private:
  testing::TempDir dir_;
};

class RecordingTarget final : public daemon::ReloadTarget {
 public:
  void apply(const config::Config& next) override {
    if (refuse) throw std::runtime_error("cannot build the webhook outlet");
    applied.push_back(next);
  }
  std::vector<config::Config> applied;
  bool refuse = false;
};

// A reloader of salttap.yaml, which holds kFirst to begin with, on a manual
// clock, applying to a RecordingTarget.
struct Reloading {
  Files files;
  const std::string path = files.write("salttap.yaml", kFirst);
  ManualClock clock{kNow};
  RecordingTarget target;
  daemon::ConfigReloader reloader{config::load_config(path), path, [this] { return config::load_config(path); }, target,
                                  clock};
};

TEST(PlanReload, TakesWhatCanChangeAndNamesWhatNeedsARestart) {
  Files files;
  const config::Config running = config::load_config(files.write("a.yaml", kFirst));
  const config::Config loaded = config::load_config(files.write("b.yaml", kSecond));
  const daemon::ReloadPlan plan = daemon::plan_reload(running, loaded);

  EXPECT_EQ(plan.needs_restart,
            (std::vector<std::string>{"master_id", "checkpoint", "reconcile", "indexer.hosts", "indexer.spool"}));
  const config::Config& n = plan.next;
  // Kept: the running values.
  EXPECT_EQ(n.master_id, "m1");
  EXPECT_EQ(n.checkpoint.interval, std::chrono::milliseconds(10'000));
  EXPECT_TRUE(n.reconcile.enabled);
  EXPECT_EQ(n.indexer.http.hosts, running.indexer.http.hosts);
  EXPECT_EQ(n.indexer.spool.dir, running.indexer.spool.dir);
  // Taken: the file's.
  EXPECT_EQ(n.correlator.deadline_for("test.sleep"), 60 * kMicrosPerSecond);
  EXPECT_EQ(n.correlator.noise_funs, std::vector<std::string>{"saltutil.find_job"});
  EXPECT_EQ(n.auditor, loaded.auditor);
  EXPECT_EQ(n.redactor, loaded.redactor);
  EXPECT_EQ(n.alerts.min_risk, correlator::RiskLevel::low);
  EXPECT_FALSE(n.alert_log);
  ASSERT_TRUE(n.webhook);
  EXPECT_EQ(n.webhook->url, "http://127.0.0.1:1/hook");
  const indexer::DocumentOptions& docs = n.indexer.documents;
  EXPECT_EQ(docs.functions_blacklist, std::vector<std::string>{"test.version"});
  EXPECT_EQ(docs.functions_whitelist, std::vector<std::string>{"test.*"});
  EXPECT_FALSE(docs.events);
  EXPECT_EQ(docs.text_cap, 4096u);
}

TEST(PlanReload, TheSameFileAgainNeedsNoRestart) {
  Files files;
  const std::string path = files.write("a.yaml", kFirst);
  EXPECT_EQ(daemon::plan_reload(config::load_config(path), config::load_config(path)).needs_restart,
            std::vector<std::string>{});
  EXPECT_EQ(daemon::plan_reload(config::default_config(), config::default_config()).needs_restart,
            std::vector<std::string>{});
}

TEST(PlanReload, EveryRestartOnlySectionIsNamed) {
  Files files;
  const config::Config running = config::load_config(files.write("a.yaml", kFirst));
  const config::Config loaded = config::load_config(files.write("b.yaml", std::string(kFirst) + R"(
  index_prefix: other
  index_date: false
  states_index: true
  number_of_replicas: 1
  tls: {verify: false}
  auth: {username: u, password_env: SALTTAP_TEST_UNSET}
  bulk: {in_flight: 4}
master_config: /etc/salt/other-master
)"));
  EXPECT_EQ(daemon::plan_reload(running, loaded).needs_restart,
            (std::vector<std::string>{
                "master_config", "indexer.tls", "indexer.auth", "indexer.index_prefix", "indexer.index_date",
                "indexer.states_index",
                "indexer templates (number_of_shards, number_of_replicas, retention_days, refresh_interval, "
                "jobs_refresh_interval, install_templates)",
                "indexer.bulk"}));
}

TEST(ConfigReloader, AppliesAFileThatLoadsAndCountsIt) {
  Reloading r;
  auto& [files, path, clock, target, reloader] = r;
  EXPECT_EQ(reloader.stats().last_ok, 0);

  files.write("salttap.yaml", kSecond);
  LogCapture log;
  EXPECT_TRUE(reloader.reload());
  ASSERT_EQ(target.applied.size(), 1u);
  EXPECT_EQ(target.applied[0].indexer.documents.functions_blacklist, std::vector<std::string>{"test.version"});
  EXPECT_EQ(reloader.running().indexer.documents.functions_blacklist, std::vector<std::string>{"test.version"});
  EXPECT_EQ(reloader.running().master_id, "m1") << "needs a restart: kept";
  EXPECT_EQ(reloader.stats().ok, 1u);
  EXPECT_EQ(reloader.stats().failed, 0u);
  EXPECT_EQ(reloader.stats().last_ok, kNow);
  const std::string text = log.text();
  EXPECT_NE(text.find("reload: reloaded " + path), std::string::npos) << text;
  EXPECT_NE(text.find("needs a restart (the running value is kept): master_id, checkpoint, reconcile, "
                      "indexer.hosts, indexer.spool"),
            std::string::npos)
      << text;
}

TEST(ConfigReloader, AFileThatDoesNotLoadKeepsTheRunningConfig) {
  struct Case {
    const char* what;
    std::string text;
    const char* error;  // in the logged reason, after the file's path
  };
  const std::vector<Case> cases = {
      {"yaml", "correlator: [unclosed\n", "end of sequence"},
      {"unknown key", std::string(kSecond) + "colour: blue\n", "colour"},
      {"bad redaction regex", "redaction: {key_patterns: [\"(unclosed\"]}\n", "key_patterns"},
      {"bad audit regex", "audit: {rules: [{name: r, arg_patterns: [\"[z-a]\"]}]}\n", "audit rule 'r'"},
      {"wrong type", "indexer: {functions_blacklist: {a: b}}\n", "functions_blacklist"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Reloading r;
    auto& [files, path, clock, target, reloader] = r;
    files.write("salttap.yaml", c.text);
    LogCapture log;
    EXPECT_FALSE(reloader.reload());
    EXPECT_TRUE(target.applied.empty());
    EXPECT_EQ(reloader.stats().ok, 0u);
    EXPECT_EQ(reloader.stats().failed, 1u);
    EXPECT_EQ(reloader.stats().last_ok, 0);
    EXPECT_EQ(reloader.running().indexer.documents.functions_blacklist, std::vector<std::string>{"saltutil.find_job"});
    const std::string text = log.text();
    EXPECT_NE(text.find("ERROR"), std::string::npos) << text;
    EXPECT_NE(text.find("reload: not applied, the running config stays: " + path + ": "), std::string::npos) << text;
    EXPECT_NE(text.find(c.error), std::string::npos) << text;

    // Fixed: the next reload applies.
    files.write("salttap.yaml", kSecond);
    EXPECT_TRUE(reloader.reload());
    EXPECT_EQ(reloader.stats().ok, 1u);
    EXPECT_EQ(reloader.stats().failed, 1u);
  }
}

TEST(ConfigReloader, ATargetThatRefusesKeepsTheRunningConfig) {
  Reloading r;
  auto& [files, path, clock, target, reloader] = r;
  target.refuse = true;
  files.write("salttap.yaml", kSecond);
  LogCapture log;
  EXPECT_FALSE(reloader.reload());
  EXPECT_EQ(reloader.stats().failed, 1u);
  EXPECT_EQ(reloader.running().indexer.documents.functions_blacklist, std::vector<std::string>{"saltutil.find_job"});
  EXPECT_NE(log.text().find("cannot build the webhook outlet"), std::string::npos) << log.text();
}

TEST(ConfigReloader, PublishesTheCountsAndTheLastReload) {
  Metrics m;
  daemon::publish_reload_metrics(m, daemon::ReloadStats{2, 1, 1'800'000'000'500'000});
  const std::string text = m.render();
  EXPECT_NE(text.find("salttap_config_reloads_total{result=\"ok\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("salttap_config_reloads_total{result=\"error\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("salttap_config_last_reload_timestamp_seconds 1800000000.5"), std::string::npos) << text;
}

// `tap:` - read at start only (a reload names it), validated, the journal beside the spool by default.
TEST(TapConfig, KeysAreReadCheckedAndNeedARestart) {
  Files files;
  const config::Config c = config::load_config(files.write("tap.yaml", R"(
tap:
  queue_max_events: 7
  queue_max_bytes: 4096
  journal: {enabled: false, dir: /srv/j, max_bytes: 1048576, segment_bytes: 65536}
)"));
  EXPECT_EQ(c.tap.queue.max_events, 7u);
  EXPECT_EQ(c.tap.queue.max_bytes, 4096u);
  EXPECT_FALSE(c.tap.journal);
  EXPECT_EQ(config::tap_journal_dir(c), std::filesystem::path("/srv/j"));
  EXPECT_EQ(c.tap.journal_max_bytes, 1048576u);
  EXPECT_EQ(c.tap.journal_segment_bytes, 65536u);

  config::Config d = config::default_config();
  EXPECT_TRUE(d.tap.journal);
  EXPECT_EQ(d.tap.queue.max_events, 50000u);
  EXPECT_EQ(d.tap.queue.max_bytes, 16u << 20);
  EXPECT_EQ(d.tap.journal_max_bytes, 1ull << 30);
  d.indexer.spool.dir = "/var/lib/salttap/spool/";
  EXPECT_EQ(config::tap_journal_dir(d), std::filesystem::path("/var/lib/salttap/tap-journal"));

  EXPECT_EQ(daemon::plan_reload(config::default_config(), c).needs_restart, std::vector<std::string>{"tap"});
  for (const char* bad :
       {"tap: {queue_max_events: 0}\n", "tap: {queue_max_bytes: 10}\n", "tap: {journal: {segment_bytes: 100}}\n",
        "tap: {journal: {max_bytes: 8192, segment_bytes: 16384}}\n", "tap: {queue: 3}\n", "tap: {journal: {size: 3}}\n",
        "tap: {journal: {enabled: maybe}}\n"})
    EXPECT_THROW(config::load_config(files.write("bad.yaml", bad)), ConfigError) << bad;
}

}  // namespace
}  // namespace salttap
