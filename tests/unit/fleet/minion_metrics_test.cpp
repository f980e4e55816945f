// The per-minion gauges (fleet.minion_metrics): off by default, the globs,
// the cap with the most interesting minions first (silent, stale, failing,
// then by name) and the truncation gauges, series gone with a deleted key
// or a forgotten minion, label values escaped.

#include <gtest/gtest.h>

#include <sstream>

#include "common/metrics.h"
#include "fleet/fleet_tracker.h"
#include "fleet/minion_metrics.h"
#include "tests/support/events.h"
#include "tests/support/fleet_clock.h"

namespace salttap::fleet {
namespace {

using salttap::testing::ev;
using salttap::testing::kSec;
using salttap::testing::kT0;

FleetConfig exported(std::size_t max_minions) {
  FleetConfig c;
  c.silence = {{"silent*", false, 20 * kSec}, {"*", false, 3600 * kSec}};
  c.highstate = {{"*", 60 * kSec}};
  c.minion_metrics.enabled = true;
  c.minion_metrics.max_minions = max_minions;
  return c;
}

// The sample lines of /metrics whose name starts with `prefix`.
std::vector<std::string> lines(const Metrics& m, std::string_view prefix) {
  std::vector<std::string> out;
  std::istringstream in(m.render());
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(prefix)) out.push_back(line);
  return out;
}

class MinionMetricsTest : public ::testing::Test {
 protected:
  Micros at(Micros s) const { return kT0 + s * kSec; }
  void start(FleetConfig c, std::vector<std::string> keys) {
    fleet_ = std::make_unique<FleetTracker>(std::move(c), "m", kT0);
    fleet_->observe_hearing(true, kT0);
    (void)fleet_->set_keys(keys, at(0));
  }
  void apply(const std::string& minion, Micros s, bool ok) {
    fleet_->on_event(ev("salt/job/" + std::to_string(100 + s) + "/ret/" + minion,
                        R"({"id": ")" + minion + R"(", "fun": "state.highstate", "fun_args": [], "retcode": )" +
                            (ok ? "0" : "2") + R"(, "return": {"a_|-b_|-c_|-d": {"result": )" +
                            (ok ? "true" : "false") + R"(, "__run_num__": 0}, "e_|-f_|-g_|-h": {"result": )" +
                            (ok ? "true" : "false") + R"(, "__run_num__": 1}}})"),
                     at(s));
  }
  void ping(const std::string& minion, Micros s) {
    fleet_->on_event(ev("salt/job/1/ret/" + minion, R"({"id": ")" + minion + R"(", "fun": "test.ping"})"), at(s));
  }
  void sweep_and_publish(Micros s) {
    (void)fleet_->sweep(at(s));
    exporter_.publish(metrics_, *fleet_);
  }
  std::vector<std::string> heard() const { return lines(metrics_, "salttap_minion_last_heard_timestamp_seconds"); }

  std::unique_ptr<FleetTracker> fleet_;
  MinionMetricsExporter exporter_;
  Metrics metrics_;
};

TEST_F(MinionMetricsTest, OffByDefault) {
  start(FleetConfig{}, {"web1"});
  sweep_and_publish(1);
  EXPECT_TRUE(lines(metrics_, "salttap_minion_").empty()) << metrics_.render();
}

TEST_F(MinionMetricsTest, EachMinionItsGauges) {
  start(exported(10), {"web1", "web2"});
  ping("web1", 1);
  apply("web2", 2, false);
  apply("web2", 3, true);
  apply("web2", 4, false);
  sweep_and_publish(5);
  EXPECT_EQ(heard(), (std::vector<std::string>{
                         "salttap_minion_last_heard_timestamp_seconds{minion=\"web1\"} 1800000001",
                         "salttap_minion_last_heard_timestamp_seconds{minion=\"web2\"} 1800000004",
                     }));
  EXPECT_EQ(lines(metrics_, "salttap_minion_last_highstate_success_timestamp_seconds"),
            (std::vector<std::string>{
                "salttap_minion_last_highstate_success_timestamp_seconds{minion=\"web1\"} 0",  // never
                "salttap_minion_last_highstate_success_timestamp_seconds{minion=\"web2\"} 1800000003",
            }));
  EXPECT_EQ(lines(metrics_, "salttap_minion_last_highstate_failed_states"),
            (std::vector<std::string>{
                "salttap_minion_last_highstate_failed_states{minion=\"web1\"} 0",
                "salttap_minion_last_highstate_failed_states{minion=\"web2\"} 2",
            }));
  EXPECT_EQ(lines(metrics_, "salttap_minion_metrics_"),
            (std::vector<std::string>{"salttap_minion_metrics_truncated 0",
                                      "salttap_minion_metrics_minions{set=\"dropped\"} 0",
                                      "salttap_minion_metrics_minions{set=\"exported\"} 2"}));
}

// More minions than the cap: the silent one, then the stale one, then the
// failing one, then by name; the rest dropped and counted.
TEST_F(MinionMetricsTest, OverTheCapTheMostInterestingFirst) {
  start(exported(4), {"a-ok", "b-ok", "c-ok", "failing", "silent1", "stale"});
  for (const char* m : {"a-ok", "b-ok", "c-ok", "silent1", "stale"}) apply(m, 1, true);
  apply("failing", 20, true);
  sweep_and_publish(2);
  for (const char* m : {"a-ok", "b-ok", "c-ok", "failing", "stale"}) ping(m, 30);
  for (const char* m : {"a-ok", "b-ok", "c-ok", "failing"}) apply(m, 40, m != std::string("failing"));
  sweep_and_publish(70);  // silent1 silent since 1; stale's last success at 1: stale; failing failed at 40
  ASSERT_EQ(fleet_->find("silent1")->liveness, Liveness::silent);
  ASSERT_EQ(fleet_->find("stale")->freshness, Freshness::stale);
  ASSERT_EQ(fleet_->find("failing")->freshness, Freshness::fresh);
  ASSERT_EQ(fleet_->find("failing")->enforced_failed_states, 2u);
  EXPECT_EQ(heard(), (std::vector<std::string>{
                         "salttap_minion_last_heard_timestamp_seconds{minion=\"a-ok\"} 1800000040",
                         "salttap_minion_last_heard_timestamp_seconds{minion=\"failing\"} 1800000040",
                         "salttap_minion_last_heard_timestamp_seconds{minion=\"silent1\"} 1800000001",
                         "salttap_minion_last_heard_timestamp_seconds{minion=\"stale\"} 1800000030",
                     }));
  EXPECT_EQ(lines(metrics_, "salttap_minion_metrics_"),
            (std::vector<std::string>{"salttap_minion_metrics_truncated 1",
                                      "salttap_minion_metrics_minions{set=\"dropped\"} 2",
                                      "salttap_minion_metrics_minions{set=\"exported\"} 4"}));
  EXPECT_EQ(exporter_.counts().exported, 4u);
  EXPECT_EQ(exporter_.counts().dropped, 2u);
}

TEST_F(MinionMetricsTest, MatchAndExcludeAndTheChosenMetrics) {
  FleetConfig c = exported(10);
  c.minion_metrics.match = GlobList({"web*"});
  c.minion_metrics.exclude = GlobList({"web9"});
  c.minion_metrics.metrics = {true, false, false};
  start(c, {"web1", "web9", "db1"});
  sweep_and_publish(1);
  EXPECT_EQ(heard(), std::vector<std::string>{"salttap_minion_last_heard_timestamp_seconds{minion=\"web1\"} 0"});
  EXPECT_TRUE(lines(metrics_, "salttap_minion_last_highstate").empty());
}

TEST_F(MinionMetricsTest, SeriesGoWithADeletedKeyAForgottenMinionAndWhenSwitchedOff) {
  start(exported(10), {"web1", "web2"});
  sweep_and_publish(1);
  EXPECT_EQ(heard().size(), 2u);
  (void)fleet_->set_keys(std::vector<std::string>{"web2"}, at(2));
  sweep_and_publish(3);
  EXPECT_EQ(heard(), std::vector<std::string>{"salttap_minion_last_heard_timestamp_seconds{minion=\"web2\"} 0"});

  // Without keys, the fleet is who was heard within forget_after.
  FleetConfig c = exported(10);
  c.forget_after = 100 * kSec;
  fleet_ = std::make_unique<FleetTracker>(c, "m", kT0);
  fleet_->observe_hearing(true, kT0);
  (void)fleet_->set_keys(std::nullopt, at(0));
  ping("web1", 1);
  ping("web2", 90);
  sweep_and_publish(95);
  EXPECT_EQ(heard().size(), 2u);
  sweep_and_publish(150);
  EXPECT_EQ(heard(),
            std::vector<std::string>{"salttap_minion_last_heard_timestamp_seconds{minion=\"web2\"} 1800000090"});

  c.minion_metrics.enabled = false;
  fleet_->reconfigure(c);
  sweep_and_publish(151);
  EXPECT_TRUE(lines(metrics_, "salttap_minion_").empty()) << metrics_.render();
}

TEST_F(MinionMetricsTest, LabelValuesAreEscaped) {
  start(exported(10), {R"(we"b\1)"});
  sweep_and_publish(1);
  EXPECT_EQ(heard(), std::vector<std::string>{R"(salttap_minion_last_heard_timestamp_seconds{minion="we\"b\\1"} 0)"});
}

TEST(MetricsSamples, OnlyFamiliesWithAnOpenLabel) {
  Metrics m;
  EXPECT_THROW(m.samples(MetricId::fleet_blind, "salttap_fleet_blind 1\n"), std::logic_error);
  EXPECT_THROW(m.gauge(MetricId::minion_last_heard_timestamp_seconds, {"web1"}, 1), std::logic_error);
  m.samples(MetricId::minion_last_heard_timestamp_seconds,
            "salttap_minion_last_heard_timestamp_seconds{minion=\"a\"} 1\n");
  EXPECT_NE(m.render().find("# TYPE salttap_minion_last_heard_timestamp_seconds gauge\n"
                            "salttap_minion_last_heard_timestamp_seconds{minion=\"a\"} 1\n"),
            std::string::npos);
  m.samples(MetricId::minion_last_heard_timestamp_seconds, "");
  EXPECT_EQ(m.render().find("salttap_minion_last_heard"), std::string::npos);
}

}  // namespace
}  // namespace salttap::fleet
