// Stale highstates on a fake clock (fleet.highstate): when a watched minion
// turns stale, the one highstate_stale episode, what closes it (only a
// successful enforcing full highstate) and what does not (a failing, dry or
// partial run), silence holding it back, blind time, reloads, deleted keys,
// storms, and the state file keeping it all.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/config_error.h"
#include "fleet/fleet_state_format.h"
#include "fleet/fleet_tracker.h"
#include "tests/support/events.h"
#include "tests/support/fleet_clock.h"

namespace salttap::fleet {
namespace {

using salttap::testing::ev;
using salttap::testing::kinds;
using salttap::testing::kSec;
using salttap::testing::kT0;

// web* stale after 60 s, db* unwatched; silence after an hour (web-silent* after 20 s).
FleetConfig watched(bool alert_never = false) {
  FleetConfig c;
  c.silence = {{"web-silent*", false, 20 * kSec}, {"*", false, 3600 * kSec}};
  c.highstate = {{"web*", 60 * kSec}, {"*", 0}};
  c.highstate_alert_never = alert_never;
  c.storm.min_minions = 3;
  c.storm.min_fraction = 0;
  return c;
}

bool has(const correlator::Alert& a, std::string_view text) { return a.json.find(text) != std::string::npos; }

class HighstateFreshnessTest : public ::testing::Test {
 protected:
  explicit HighstateFreshnessTest(FleetConfig c = watched()) : fleet_(std::move(c), "m", kT0) {
    fleet_.observe_hearing(true, kT0);
  }

  Micros at(Micros s) const { return kT0 + s * kSec; }
  void keys(std::vector<std::string> names) { (void)fleet_.set_keys(names, at(0)); }
  // A state.apply return: fun_args decide full or partial, dry or enforcing; `ok` whether it succeeded.
  void apply(const std::string& minion, Micros s, bool ok, const std::string& fun_args = "[]") {
    const std::string jid = fmt::format("2026120512{:08}", s);
    const std::string state = ok ? R"({"result": true, "changes": {}, "__id__": "motd", "__run_num__": 0})"
                                 : R"({"result": false, "changes": {}, "__id__": "motd", "__run_num__": 0})";
    fleet_.on_event(
        ev("salt/job/" + jid + "/ret/" + minion,
           R"({"id": ")" + minion + R"(", "fun": "state.apply", "fun_args": )" + fun_args + R"(, "retcode": )" +
               (ok ? "0" : "2") + R"(, "return": {"file_|-motd_|-/etc/motd_|-managed": )" + state + "}}"),
        at(s));
  }
  void ping(const std::string& minion, Micros s) {
    fleet_.on_event(ev("salt/job/1/ret/" + minion, R"({"id": ")" + minion + R"(", "fun": "test.ping"})"), at(s));
  }
  SweepOutcome sweep(Micros s) { return fleet_.sweep(at(s)); }
  Freshness freshness(const std::string& minion) const { return fleet_.find(minion)->freshness; }

  FleetTracker fleet_;
};

TEST_F(HighstateFreshnessTest, StaleOnceAndFreshOnlyAfterASuccessfulEnforcingHighstate) {
  keys({"web1", "db1"});
  apply("web1", 1, true);
  apply("db1", 1, true);
  EXPECT_TRUE(sweep(30).notices.empty());
  EXPECT_EQ(freshness("web1"), Freshness::fresh);
  EXPECT_EQ(freshness("db1"), Freshness::unwatched);

  const SweepOutcome stale = sweep(62);
  ASSERT_EQ(kinds(stale.notices), std::vector<std::string>{"highstate_stale"});
  const correlator::Alert& opened = stale.notices[0];
  EXPECT_EQ(opened.doc_key, fmt::format("highstate_stale/web1/{}", at(1)));
  EXPECT_EQ(opened.doc_version, 1);
  EXPECT_TRUE(has(opened, R"("episode":"highstate_stale")")) << opened.json;
  EXPECT_TRUE(has(opened, R"("minion":"web1")"));
  EXPECT_TRUE(has(opened, R"("rule":"web*")"));
  EXPECT_TRUE(has(opened, R"("window_s":60)"));
  EXPECT_TRUE(has(opened, R"("resolved_at":null)"));
  EXPECT_EQ(freshness("web1"), Freshness::stale);
  EXPECT_EQ(fleet_.find("web1")->stale_since, at(1));
  EXPECT_EQ(fleet_.counts().freshness[static_cast<std::size_t>(Freshness::stale)], 1u);
  EXPECT_EQ(fleet_.counts().freshness[static_cast<std::size_t>(Freshness::unwatched)], 1u);
  EXPECT_TRUE(sweep(90).notices.empty());  // one alert per episode

  // Neither a dry run, nor a partial one (mods), nor a failing one refreshes it.
  apply("web1", 91, true, R"([{"__kwarg__": true, "test": true}])");
  apply("web1", 92, true, R"(["core"])");
  apply("web1", 93, false);
  const SweepOutcome still = sweep(94);
  EXPECT_TRUE(still.notices.empty());
  EXPECT_TRUE(still.records.empty());
  EXPECT_EQ(freshness("web1"), Freshness::stale);
  EXPECT_EQ(fleet_.find("web1")->enforced_failed_states, 1u);

  apply("web1", 95, true);
  const SweepOutcome fresh = sweep(96);
  ASSERT_EQ(kinds(fresh.notices), std::vector<std::string>{"highstate_fresh"});
  EXPECT_EQ(fresh.notices[0].doc_key, opened.doc_key);
  EXPECT_EQ(fresh.notices[0].doc_version, 2);
  EXPECT_TRUE(has(fresh.notices[0], R"("resolution":"highstate_ok")")) << fresh.notices[0].json;
  EXPECT_TRUE(has(fresh.notices[0], R"("duration_s":94)"));
  EXPECT_EQ(freshness("web1"), Freshness::fresh);
  EXPECT_EQ(fleet_.find("web1")->enforced_failed_states, 0u);
  EXPECT_EQ(fleet_.counts().stale_opened, 1u);
  EXPECT_EQ(fleet_.counts().stale_closed, 1u);
  EXPECT_EQ(fleet_.counts().episodes_opened, 0u);  // no silence meanwhile
}

TEST_F(HighstateFreshnessTest, NeverSuccessfulIsNeverNotStaleByDefault) {
  keys({"web1"});
  apply("web1", 1, false);
  EXPECT_TRUE(sweep(2).notices.empty());
  EXPECT_EQ(freshness("web1"), Freshness::never);
  EXPECT_TRUE(sweep(500).notices.empty());
  EXPECT_EQ(freshness("web1"), Freshness::never);
}

class AlertNeverTest : public HighstateFreshnessTest {
 protected:
  AlertNeverTest() : HighstateFreshnessTest(watched(true)) {}
};

TEST_F(AlertNeverTest, NeverSuccessfulGetsOneWindowFromTheWatchStart) {
  keys({"web1"});
  EXPECT_TRUE(sweep(10).notices.empty());  // the watch starts here
  ping("web1", 50);
  EXPECT_TRUE(sweep(70).notices.empty());
  EXPECT_EQ(freshness("web1"), Freshness::never);
  const SweepOutcome stale = sweep(71);
  ASSERT_EQ(kinds(stale.notices), std::vector<std::string>{"highstate_stale"});
  EXPECT_EQ(stale.notices[0].doc_key, fmt::format("highstate_stale/web1/{}", at(10)));
  EXPECT_TRUE(has(stale.notices[0], R"("last_successful_highstate":null)")) << stale.notices[0].json;
  apply("web1", 80, true);
  EXPECT_EQ(kinds(sweep(81).notices), std::vector<std::string>{"highstate_fresh"});
}

TEST_F(HighstateFreshnessTest, SilenceHoldsTheEpisodeBack) {
  keys({"web-silent1"});
  apply("web-silent1", 1, true);
  ASSERT_EQ(kinds(sweep(25).notices), std::vector<std::string>{"minion_silent"});
  // Past its highstate window too, but silent: its silence says it, no second alert.
  EXPECT_TRUE(sweep(70).notices.empty());
  EXPECT_EQ(freshness("web-silent1"), Freshness::stale);
  EXPECT_EQ(fleet_.find("web-silent1")->stale_since, 0);
  EXPECT_EQ(fleet_.counts().stale_opened, 0u);
  // Heard again and still stale: now the episode opens.
  ping("web-silent1", 80);
  EXPECT_EQ(kinds(sweep(81).notices), (std::vector<std::string>{"minion_recovered", "highstate_stale"}));
}

TEST_F(HighstateFreshnessTest, BlindTimeIsNotCounted) {
  keys({"web1"});
  apply("web1", 1, true);
  fleet_.observe_hearing(false, at(10));
  EXPECT_TRUE(sweep(50).notices.empty());
  fleet_.observe_hearing(true, at(100));  // 90 s blind
  EXPECT_TRUE(sweep(140).notices.empty());
  EXPECT_EQ(freshness("web1"), Freshness::fresh);  // 139 s on the wall, 49 heard
  EXPECT_EQ(kinds(sweep(152).notices), std::vector<std::string>{"highstate_stale"});
}

TEST_F(HighstateFreshnessTest, AReloadJudgesTheOpenEpisodeAgain) {
  keys({"web1", "web2"});
  apply("web1", 1, true);
  apply("web2", 1, true);
  ASSERT_EQ(kinds(sweep(62).notices), (std::vector<std::string>{"highstate_stale", "highstate_stale"}));
  FleetConfig longer = watched();
  longer.highstate = {{"web1", 600 * kSec}, {"*", 0}};  // web1: a longer window; web2: no longer watched
  fleet_.reconfigure(longer);
  const SweepOutcome out = sweep(63);
  EXPECT_TRUE(out.notices.empty());  // closed without a notice
  ASSERT_EQ(out.records.size(), 2u);
  for (const auto& r : out.records) {
    EXPECT_EQ(r.kind, correlator::AlertKind::highstate_stale);
    EXPECT_TRUE(has(r, R"("resolution":"rule_changed")")) << r.json;
    EXPECT_EQ(r.doc_version, 2);
  }
  EXPECT_EQ(freshness("web1"), Freshness::fresh);
  EXPECT_EQ(freshness("web2"), Freshness::unwatched);
}

TEST_F(HighstateFreshnessTest, ADeletedKeyClosesTheEpisode) {
  keys({"web1"});
  apply("web1", 1, true);
  ASSERT_EQ(kinds(sweep(62).notices), std::vector<std::string>{"highstate_stale"});
  const SweepOutcome out = fleet_.set_keys(std::vector<std::string>{}, at(70));
  EXPECT_TRUE(out.notices.empty());
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_TRUE(has(out.records[0], R"("resolution":"key_deleted")"));
  EXPECT_EQ(fleet_.find("web1"), nullptr);
}

TEST_F(HighstateFreshnessTest, AStormIsOneAlertEachWay) {
  keys({"web1", "web2", "web3", "db1"});
  for (const char* m : {"web1", "web2", "web3", "db1"}) apply(m, 1, true);
  const SweepOutcome stale = sweep(62);
  ASSERT_EQ(kinds(stale.notices), std::vector<std::string>{"fleet_highstate_stale"});
  EXPECT_TRUE(has(stale.notices[0], R"("count":3)")) << stale.notices[0].json;
  EXPECT_EQ(stale.records.size(), 3u);  // each episode still has its document
  for (const char* m : {"web1", "web2", "web3"}) apply(m, 70, true);
  const SweepOutcome fresh = sweep(71);
  ASSERT_EQ(kinds(fresh.notices), std::vector<std::string>{"fleet_highstate_fresh"});
  EXPECT_EQ(fresh.records.size(), 3u);
}

TEST_F(HighstateFreshnessTest, TheEntityDocumentSaysHowFresh) {
  keys({"web1"});
  apply("web1", 1, true);
  (void)sweep(62);
  std::vector<EntityDoc> docs;
  fleet_.collect_entities(at(62), docs);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_NE(docs[0].json.find(R"("highstate_freshness":"stale")"), std::string::npos) << docs[0].json;
  EXPECT_NE(docs[0].json.find(fmt::format(R"("stale_since":"{}")", format_utc(at(1)))), std::string::npos);
  apply("web1", 70, true);
  (void)sweep(71);
  docs.clear();
  fleet_.collect_entities(at(71), docs);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_NE(docs[0].json.find(R"("highstate_freshness":"fresh","stale_since":null)"), std::string::npos)
      << docs[0].json;
}

// The open episode and the clocks survive a restart through the state file.
TEST_F(HighstateFreshnessTest, TheStateFileKeepsTheEpisode) {
  keys({"web1"});
  apply("web1", 1, true);
  apply("web1", 2, false);
  ASSERT_EQ(kinds(sweep(62).notices), std::vector<std::string>{"highstate_stale"});
  const auto decoded = decode_fleet_state(encode_fleet_state(fleet_.snapshot(at(63))));
  ASSERT_TRUE(decoded) << decoded.error();
  const MinionEntity& m = decoded.value().minions.at(0).second;
  EXPECT_EQ(m.stale_since, at(1));
  EXPECT_EQ(m.stale_detected_at, at(62));
  EXPECT_EQ(m.stale_window, 60 * kSec);
  EXPECT_EQ(m.freshness, Freshness::stale);
  EXPECT_EQ(m.enforced_at, at(2));
  EXPECT_EQ(m.enforced_failed_states, 1u);
  EXPECT_EQ(m.watched_since, at(62));  // the first sweep that watched it

  FleetTracker again(watched(), "m", at(63));
  again.restore(decoded.value());
  again.observe_hearing(true, at(64));
  EXPECT_TRUE(again.sweep(at(70)).notices.empty());  // the same episode: nothing repeats
  again.on_event(ev("salt/job/20261205120000000080/ret/web1",
                    R"({"id": "web1", "fun": "state.highstate", "fun_args": [], "retcode": 0,)"
                    R"( "return": {"a_|-b_|-c_|-d": {"result": true, "__run_num__": 0}}})"),
                 at(80));
  const SweepOutcome fresh = again.sweep(at(81));
  ASSERT_EQ(kinds(fresh.notices), std::vector<std::string>{"highstate_fresh"});
  EXPECT_EQ(fresh.notices[0].doc_key, fmt::format("highstate_stale/web1/{}", at(1)));
}

// A version 2 file (before the freshness) is still read; the blind total at
// the last success is the one saved, so only blind time after the save is
// left out.
TEST(FleetStateFormat, ReadsVersion2WithoutFreshness) {
  const std::string v2 =
      R"({"format":"salttap-fleet","version":2,"saved_at":5,"blind_total":3,"keys_known":true,"minions":[)"
      R"({"id":"web1","last_heard":4,"blind_at_heard":0,"via":"return","last_connected":0,"blind_at_connected":0,)"
      R"("connected":false,"expected":true,"expected_since":1,"blind_at_expected":0,"silent_since":0,)"
      R"("detected_at":0,"window":0,"liveness":"ok",)"
      R"("last_highstate":{"at":4,"jid":"2","succeeded":false,"test":false},)"
      R"("last_successful_highstate":{"at":2,"jid":"1","succeeded":true,"test":false},"indexed_version":4}]})";
  const auto s = decode_fleet_state(v2);
  ASSERT_TRUE(s) << s.error();
  const MinionEntity& m = s.value().minions.at(0).second;
  EXPECT_EQ(m.blind_at_success, 3);
  EXPECT_EQ(m.enforced_at, 4);
  EXPECT_EQ(m.enforced_failed_states, 1u);
  EXPECT_EQ(m.stale_since, 0);
  EXPECT_EQ(m.freshness, Freshness::unwatched);
  EXPECT_NE(encode_fleet_state(s.value()).find(R"("version":3)"), std::string::npos);
}

TEST(FleetStateFormat, RefusesAStaleEpisodeWithoutItsWindow) {
  FleetSnapshot s;
  MinionEntity m;
  m.stale_since = 7;
  m.stale_detected_at = 9;
  m.stale_window = 60;
  m.freshness = Freshness::stale;
  s.minions = {{"a", m}};
  const std::string text = encode_fleet_state(s);
  ASSERT_TRUE(decode_fleet_state(text));
  std::string bad = text;
  bad.replace(bad.find(R"("stale_window":60)"), 17, R"("stale_window":0)");
  EXPECT_FALSE(decode_fleet_state(bad));
  std::string unknown = text;
  unknown.replace(unknown.find(R"("freshness":"stale")"), 19, R"("freshness":"rotten")");
  EXPECT_FALSE(decode_fleet_state(unknown));
}

TEST(FleetConfig, ParsesHighstateRulesAndMinionMetrics) {
  const FleetConfig c = parse_fleet_config(YAML::Load(R"(
highstate:
  - {match: "web*", stale_after_seconds: 7200}
  - {match: "*", stale_after_seconds: null}
highstate_alert_never: true
minion_metrics: {enabled: true, match: ["web*", "db*"], exclude: "db9", max_minions: 2,
                 metrics: [last_heard, last_highstate_failed_states]}
)"));
  ASSERT_EQ(c.highstate.size(), 2u);
  EXPECT_EQ(c.highstate[0].stale_after, 7200 * kSec);
  EXPECT_EQ(c.highstate[1].stale_after, 0);
  EXPECT_EQ(c.highstate_rule_for("web1"), 0);
  EXPECT_EQ(c.highstate_rule_for("db1"), 1);
  EXPECT_TRUE(c.highstate_alert_never);
  EXPECT_TRUE(c.minion_metrics.enabled);
  EXPECT_TRUE(c.minion_metrics.match.matches_any("db1"));
  EXPECT_FALSE(c.minion_metrics.match.matches_any("app1"));
  EXPECT_TRUE(c.minion_metrics.exclude.matches_any("db9"));
  EXPECT_EQ(c.minion_metrics.max_minions, 2u);
  EXPECT_EQ(c.minion_metrics.metrics, (std::array<bool, kMinionMetrics>{true, false, true}));

  const FleetConfig defaults = parse_fleet_config(YAML::Load("{}"));
  EXPECT_TRUE(defaults.highstate.empty());  // off: no minion watched
  EXPECT_EQ(defaults.highstate_rule_for("web1"), -1);
  EXPECT_FALSE(defaults.highstate_alert_never);
  EXPECT_FALSE(defaults.minion_metrics.enabled);
  EXPECT_EQ(defaults.minion_metrics.max_minions, 1000u);

  for (const char* bad : {"highstate: {match: x}", "highstate: [{stale_after_seconds: 5}]",
                          "highstate: [{match: x, stale_after_seconds: 0}]", "highstate: [{match: x, after: 5}]",
                          "minion_metrics: {max_minions: 0}", "minion_metrics: {metrics: [drift_states]}",
                          "minion_metrics: {limit: 3}"}) {
    EXPECT_THROW(parse_fleet_config(YAML::Load(bad)), ConfigError) << bad;
  }
}

}  // namespace
}  // namespace salttap::fleet
