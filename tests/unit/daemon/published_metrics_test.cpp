// Every publisher run once into one registry, as `run` wires them: together
// they publish every metric of the catalog (common/metric_catalog.h) with
// every combination of its label values, and nothing else (Metrics refuses
// anything else). A metric declared and never published, or a label value
// declared and never used, fails here.

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <span>
#include <sstream>
#include <string>

#include "alerting/internal/alert_metrics.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/metrics_server.h"
#include "common/version.h"
#include "correlator/correlator_metrics.h"
#include "daemon/internal/config_reload.h"
#include "fleet/fleet_metrics.h"
#include "indexer/document_metrics.h"
#include "indexer/indexer_service.h"
#include "recovery/checkpoint_file.h"
#include "recovery/reconciler.h"
#include "tap/tap_metrics.h"
#include "tests/support/fake_http.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/spool_fixtures.h"
#include "web/web_metrics.h"

namespace salttap {
namespace {

// An outlet that is never started: only its name and stats matter here.
class IdleOutlet final : public alerting::AsyncAlertOutlet {
 public:
  IdleOutlet(std::string name, SteadyTime& time) : AsyncAlertOutlet(std::move(name), {}, time, [] { return 0.5; }) {}
  ~IdleOutlet() override { stop(std::chrono::milliseconds(0)); }

 private:
  std::string deliver(const correlator::Alert& /*alert*/) override { return {}; }
};

// Each family's samples as /metrics shows them: name -> label sets ("" when none).
std::map<std::string, std::set<std::string>> samples_of(const std::string& text) {
  std::map<std::string, std::set<std::string>> samples;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("#")) continue;
    const std::string sample = line.substr(0, line.find(' '));
    const auto brace = sample.find('{');
    samples[sample.substr(0, brace)].insert(brace == std::string::npos ? "" : sample.substr(brace));
  }
  return samples;
}

// The one minion of the fleet below: an open label's (metric_catalog.h) only value here.
constexpr std::string_view kOpenValues[] = {"db1"};

// Every label set the catalog allows for `spec`, rendered as Metrics does.
std::set<std::string> every_label_set(const MetricSpec& spec) {
  std::set<std::string> sets{""};
  for (const MetricLabel& label : spec.labels) {
    std::set<std::string> longer;
    for (const std::string& prefix : sets)
      for (std::string_view value : label.open ? std::span<const std::string_view>(kOpenValues) : label.values)
        longer.insert(prefix + (prefix.empty() ? "" : ",") + std::string(label.name) + "=\"" + std::string(value) +
                      "\"");
    sets = std::move(longer);
  }
  if (spec.labels.empty()) return sets;
  std::set<std::string> braced;
  for (const std::string& s : sets) braced.insert("{" + s + "}");
  return braced;
}

TEST(PublishedMetrics, ThePublishersTogetherExportTheWholeCatalog) {
  Metrics m;

  publish_build_info(m);
  daemon::publish_reload_metrics(m, daemon::ReloadStats{});
  tap::publish_tap_metrics(m, tap::TapStats{}, tap::QueueStats{});

  const ManualClock clock(0);
  const correlator::Correlator correlator({}, clock, [](correlator::JobUpdate, const correlator::Job&) {});
  correlator::publish_correlator_metrics(m, correlator);
  recovery::publish_checkpoint_metrics(m, recovery::CheckpointStats{});

  testing::FakeSteadyTime time;
  const alerting::AlertDispatcher dispatcher({});
  const IdleOutlet webhook("webhook", time), fire("fire", time);
  alerting::publish_alert_metrics(m, dispatcher, {&webhook, &fire});

  // One accepted minion and the per-minion gauges on: their families too.
  const testing::TempDir fleet_dir;
  std::filesystem::create_directories(fleet_dir.path() / "keys");
  std::ofstream(fleet_dir.path() / "keys" / "db1") << "key";
  fleet::FleetConfig fleet_config;
  fleet_config.minion_metrics.enabled = true;
  fleet::FleetKeeper keeper(fleet_config, fleet_dir.path() / "keys", fleet_dir.path() / "fleet.state", "m", clock);
  (void)keeper.tick(true);
  fleet::publish_fleet_metrics(m, keeper);

  indexer::publish_document_metrics(m, indexer::DocumentStats{});
  recovery::publish_reconcile_metrics(m, {}, {}, {}, false);

  const testing::TempDir dir;
  indexer::IndexerConfig config;
  config.spool.dir = dir.path() / "spool";
  config.backfill_lane = true;  // as `run` opens it: the backfill lane's spool families too
  // As many engine hosts as salttap_indexer_host_* have places for: every label set.
  config.http.hosts.clear();
  for (int i = 0; i < 8; ++i) config.http.hosts.push_back("http://es" + std::to_string(i + 1) + ":9200");
  const testing::FakeHttp engine;
  const indexer::IndexerService service(
      config, time, [] { return 0.5; }, engine.factory());  // never started
  service.publish(m);
  const web::UiMetrics ui;
  ui.publish(m);
  const MetricsServer listener("127.0.0.1:0", m);  // its own counts, published as it starts and at every /metrics

  const auto published = samples_of(m.render());
  std::set<std::string> declared;
  for (const MetricSpec& spec : metric_catalog()) {
    const std::string name(spec.name);
    if (spec.type == MetricType::summary) {
      declared.insert(name + "_sum");
      declared.insert(name + "_count");
      EXPECT_TRUE(published.contains(name + "_sum") && published.contains(name + "_count")) << name;
      continue;
    }
    if (spec.type == MetricType::histogram) {
      // Each label set has its _sum and _count, and one _bucket per bound and +Inf.
      for (const char* suffix : {"_sum", "_count"}) {
        declared.insert(name + suffix);
        EXPECT_EQ(published.at(name + suffix), every_label_set(spec)) << name << suffix;
      }
      declared.insert(name + "_bucket");
      EXPECT_EQ(published.at(name + "_bucket").size(), every_label_set(spec).size() * (spec.buckets.size() + 1))
          << name;
      continue;
    }
    declared.insert(name);
    const auto it = published.find(name);
    if (it == published.end()) {
      ADD_FAILURE() << name << " is in the catalog but no publisher exports it";
      continue;
    }
    EXPECT_EQ(it->second, every_label_set(spec)) << name;
  }
  for (const auto& [name, labels] : published) EXPECT_TRUE(declared.contains(name)) << name;
}

}  // namespace
}  // namespace salttap
