// The fleet's silence rules on a fake clock: who is heard, when an episode
// opens and closes, what the blind clock keeps out, and the storm.

#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "fleet/fleet_tracker.h"
#include "tests/support/events.h"
#include "tests/support/fleet_clock.h"

namespace salttap::fleet {
namespace {

using salttap::testing::ev;
using salttap::testing::kinds;
using salttap::testing::kSec;
using salttap::testing::kT0;

FleetConfig rules(Micros db_window, Micros other_window) {
  FleetConfig c;
  c.silence = {{"laptop-*", true, 0}, {"db*", false, db_window}, {"*", false, other_window}};
  c.storm.min_minions = 3;
  c.storm.min_fraction = 0;
  return c;
}

class FleetTrackerTest : public ::testing::Test {
 protected:
  FleetTrackerTest() : fleet_(rules(20 * kSec, 40 * kSec), "m", kT0) { fleet_.observe_hearing(true, kT0); }

  Micros at(Micros s) const { return kT0 + s * kSec; }
  void ret(const std::string& minion, Micros s, const std::string& fun = "test.ping") {
    fleet_.on_event(ev("salt/job/1/ret/" + minion, R"({"id": ")" + minion + R"(", "fun": ")" + fun + R"("})"), at(s));
  }
  SweepOutcome sweep(Micros s) { return fleet_.sweep(at(s)); }
  Liveness liveness(const std::string& minion) const { return fleet_.find(minion)->liveness; }

  FleetTracker fleet_;
};

TEST_F(FleetTrackerTest, OneAlertPerEpisodeAndOneRecovery) {
  EXPECT_TRUE(fleet_.set_keys(std::vector<std::string>{"db1", "web1"}, at(0)).notices.empty());
  ret("db1", 1);
  ret("web1", 1);
  EXPECT_TRUE(sweep(20).notices.empty());
  EXPECT_EQ(liveness("db1"), Liveness::ok);
  ret("web1", 20);
  const SweepOutcome opened = sweep(22);
  ASSERT_EQ(kinds(opened.notices), std::vector<std::string>{"minion_silent"});
  EXPECT_NE(opened.notices[0].json.find(R"("minion":"db1")"), std::string::npos);
  EXPECT_EQ(opened.notices[0].doc_key, fmt::format("minion_silent/db1/{}", at(1)));
  EXPECT_EQ(opened.notices[0].doc_version, 1);
  EXPECT_EQ(liveness("db1"), Liveness::silent);
  EXPECT_EQ(liveness("web1"), Liveness::ok);
  ret("web1", 50);
  EXPECT_TRUE(sweep(52).notices.empty());  // still the same episode: nothing repeats
  EXPECT_TRUE(sweep(90).notices.empty());
  ret("db1", 95);
  ret("web1", 95);
  const SweepOutcome back = sweep(96);
  ASSERT_EQ(kinds(back.notices), std::vector<std::string>{"minion_recovered"});
  EXPECT_NE(back.notices[0].json.find(R"("duration_s":94)"), std::string::npos) << back.notices[0].json;
  EXPECT_NE(back.notices[0].json.find(R"("resolution":"heard")"), std::string::npos);
  EXPECT_EQ(back.notices[0].doc_key, opened.notices[0].doc_key);
  EXPECT_EQ(back.notices[0].doc_version, 2);
  EXPECT_EQ(fleet_.counts().episodes_opened, 1u);
  EXPECT_EQ(fleet_.counts().episodes_closed, 1u);
}

TEST_F(FleetTrackerTest, FindJobAnswersCountAsHeard) {
  (void)fleet_.set_keys(std::vector<std::string>{"db1"}, at(0));
  ret("db1", 15, "saltutil.find_job");
  EXPECT_TRUE(sweep(30).notices.empty());
  EXPECT_EQ(fleet_.find("db1")->via, HeardVia::find_job);
}

TEST_F(FleetTrackerTest, LostPresenceClearsConnectedAndMovesNoTime) {
  (void)fleet_.set_keys(std::vector<std::string>{"db1"}, at(0));
  fleet_.on_event(ev("salt/presence/present", R"({"present": ["db1"]})"), at(5));
  fleet_.on_event(ev("salt/presence/change", R"({"new": [], "lost": ["db1"]})"), at(18));
  const MinionEntity& m = *fleet_.find("db1");
  EXPECT_FALSE(m.connected);
  EXPECT_EQ(m.last_connected, at(5));
  EXPECT_EQ(kinds(sweep(26).notices), std::vector<std::string>{"minion_silent"});  // 21 s after the last presence
}

TEST_F(FleetTrackerTest, EventTimeComesFromTheStamp) {
  (void)fleet_.set_keys(std::vector<std::string>{"db1"}, at(0));
  // Drained from a backlog at 30: it spoke at 2.
  fleet_.on_event(ev("salt/job/1/ret/db1", R"({"id": "db1", "fun": "test.ping", "_stamp": ")" +
                                               format_utc(at(2)).substr(0, 19) + R"(.000000"})"),
                  at(30));
  EXPECT_EQ(fleet_.find("db1")->last_heard, at(2));
}

TEST_F(FleetTrackerTest, BlindTimeIsNotSilence) {
  (void)fleet_.set_keys(std::vector<std::string>{"db1"}, at(0));
  ret("db1", 1);
  fleet_.observe_hearing(false, at(5));  // the bus goes away for 100 s
  EXPECT_TRUE(sweep(60).notices.empty());
  fleet_.observe_hearing(true, at(105));
  EXPECT_TRUE(sweep(110).notices.empty());                                          // 4 + 5 s heard-silence
  EXPECT_EQ(kinds(sweep(122).notices), std::vector<std::string>{"minion_silent"});  // 4 + 17 = 21 s
}

TEST_F(FleetTrackerTest, NeverHeardGetsOneWindowOfGrace) {
  (void)fleet_.set_keys(std::vector<std::string>{"web1"}, at(0));
  EXPECT_TRUE(sweep(39).notices.empty());
  EXPECT_EQ(liveness("web1"), Liveness::never_heard);
  EXPECT_EQ(kinds(sweep(41).notices), std::vector<std::string>{"minion_silent"});
}

TEST_F(FleetTrackerTest, IgnoredMinionsNeverAlert) {
  (void)fleet_.set_keys(std::vector<std::string>{"laptop-1"}, at(0));
  EXPECT_TRUE(sweep(10'000).notices.empty());
  EXPECT_EQ(liveness("laptop-1"), Liveness::ignored);
}

TEST_F(FleetTrackerTest, DeletedKeyClosesTheEpisodeWithoutARecovery) {
  (void)fleet_.set_keys(std::vector<std::string>{"db1"}, at(0));
  ASSERT_EQ(sweep(21).notices.size(), 1u);
  fleet_.on_event(ev("salt/key", R"({"id": "db1", "act": "delete", "result": true})"), at(25));
  EXPECT_TRUE(fleet_.take_keys_changed());
  const SweepOutcome out = sweep(26);
  EXPECT_TRUE(out.notices.empty());
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_NE(out.records[0].json.find(R"("resolution":"key_deleted")"), std::string::npos);
  EXPECT_EQ(out.records[0].doc_version, 2);
  EXPECT_EQ(fleet_.find("db1"), nullptr);
}

TEST_F(FleetTrackerTest, KeysGoneFromTheDirectoryCloseTheirEpisodes) {
  (void)fleet_.set_keys(std::vector<std::string>{"db1", "web1"}, at(0));
  ret("web1", 10);
  ASSERT_EQ(sweep(21).notices.size(), 1u);
  const SweepOutcome out = fleet_.set_keys(std::vector<std::string>{"web1"}, at(22));
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_NE(out.records[0].json.find(R"("resolution":"key_deleted")"), std::string::npos);
}

TEST_F(FleetTrackerTest, ALongerWindowAfterAReloadClosesWithoutARecovery) {
  (void)fleet_.set_keys(std::vector<std::string>{"db1"}, at(0));
  ret("db1", 1);
  ASSERT_EQ(sweep(22).notices.size(), 1u);
  fleet_.reconfigure(rules(3600 * kSec, 3600 * kSec));
  const SweepOutcome out = sweep(24);
  EXPECT_TRUE(out.notices.empty());
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_NE(out.records[0].json.find(R"("resolution":"rule_changed")"), std::string::npos);
  EXPECT_EQ(liveness("db1"), Liveness::ok);
}

TEST_F(FleetTrackerTest, AStormIsOneAlert) {
  (void)fleet_.set_keys(std::vector<std::string>{"a", "b", "c", "d"}, at(0));
  const SweepOutcome out = sweep(41);
  ASSERT_EQ(kinds(out.notices), std::vector<std::string>{"fleet_silent"});
  EXPECT_NE(out.notices[0].json.find(R"("count":4)"), std::string::npos) << out.notices[0].json;
  EXPECT_EQ(out.records.size(), 4u);  // each episode keeps its document
  for (const char* m : {"a", "b", "c", "d"}) ret(m, 50);
  const SweepOutcome back = sweep(51);
  EXPECT_EQ(kinds(back.notices), std::vector<std::string>{"fleet_recovered"});
}

TEST_F(FleetTrackerTest, WithoutKeysTheFleetIsWhoWasHeardLately) {
  FleetConfig c = rules(20 * kSec, 40 * kSec);
  c.forget_after = 100 * kSec;
  FleetTracker fleet(c, "m", kT0);
  fleet.observe_hearing(true, kT0);
  (void)fleet.set_keys(std::nullopt, at(0));
  fleet.on_event(ev("salt/job/1/ret/web1", R"({"id": "web1", "fun": "test.ping"})"), at(1));
  EXPECT_EQ(kinds(fleet.sweep(at(42)).notices), std::vector<std::string>{"minion_silent"});
  const SweepOutcome out = fleet.sweep(at(102));  // forgotten
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_NE(out.records[0].json.find(R"("resolution":"forgotten")"), std::string::npos);
}

// A state.apply return as a minion sends it: `fun_args` decide whether it
// is a full highstate and a dry run; the states decide whether it succeeded.
tap::Event highstate_ret(const std::string& minion, const std::string& jid, const std::string& fun_args, bool ok) {
  const std::string result = ok ? "true" : "false";
  return ev("salt/job/" + jid + "/ret/" + minion,
            R"({"id": ")" + minion + R"(", "fun": "state.apply", "fun_args": )" + fun_args + R"(, "retcode": )" +
                (ok ? "0" : "2") + R"(, "return": {"file_|-motd_|-/etc/motd_|-managed": {"result": )" + result +
                R"(, "changes": {}, "__id__": "motd", "__run_num__": 0}}})");
}

TEST_F(FleetTrackerTest, FullHighstatesAreKeptPerMinion) {
  fleet_.on_event(highstate_ret("web1", "101", "[]", true), at(1));
  const MinionEntity* m = fleet_.find("web1");
  EXPECT_EQ(m->last_highstate, (HighstateRun{at(1), "101", true, false}));
  EXPECT_EQ(m->last_successful_highstate, m->last_highstate);
  EXPECT_EQ(m->via, HeardVia::ret);

  // A dry run is the last highstate, never the last successful one.
  fleet_.on_event(highstate_ret("web1", "102", R"([{"__kwarg__": true, "test": true}])", true), at(2));
  EXPECT_EQ(m->last_highstate, (HighstateRun{at(2), "102", true, true}));
  EXPECT_EQ(m->last_successful_highstate.jid, "101");

  // A failed enforcing run neither.
  fleet_.on_event(highstate_ret("web1", "103", "[]", false), at(3));
  EXPECT_EQ(m->last_highstate, (HighstateRun{at(3), "103", false, false}));
  EXPECT_EQ(m->last_successful_highstate.jid, "101");

  // Partial runs (mods) and other functions are no highstates.
  fleet_.on_event(highstate_ret("web1", "104", R"(["core"])", true), at(4));
  ret("web1", 5, "state.sls");
  EXPECT_EQ(m->last_highstate.jid, "103");

  // Event time orders them, not jids: a later return wins; one stamped
  // earlier (a backlog drained late) changes nothing.
  fleet_.on_event(highstate_ret("web1", "100", "[]", true), at(6));
  EXPECT_EQ(m->last_successful_highstate.jid, "100");
  const auto stamped =
      ev("salt/job/99/ret/web1", R"({"id": "web1", "fun": "state.highstate", "fun_args": [], "_stamp": ")" +
                                     format_utc(at(0)) + R"(", "return": {"a_|-b_|-c_|-d": {"result": true}}})");
  fleet_.on_event(stamped, at(7));
  EXPECT_EQ(m->last_successful_highstate.jid, "100");
  EXPECT_EQ(m->last_highstate.jid, "100");
}

std::vector<std::string> entity_minions(const std::vector<EntityDoc>& docs) {
  std::vector<std::string> out;
  for (const auto& d : docs) out.push_back(d.minion);
  std::sort(out.begin(), out.end());
  return out;
}

// The entity index: a document when something meaningful changes, a
// heartbeat alone at most every index_interval, versions that only grow.
TEST_F(FleetTrackerTest, EntityDocumentsFollowMeaningfulChangesAndThrottleHeartbeats) {
  FleetConfig c = rules(20 * kSec, 40 * kSec);
  c.index_interval = 60 * kSec;
  fleet_.reconfigure(c);
  (void)fleet_.set_keys(std::vector<std::string>{"db1", "web1"}, at(0));
  ret("db1", 1);
  (void)sweep(1);
  std::vector<EntityDoc> docs;
  fleet_.collect_entities(at(1), docs);
  ASSERT_EQ(entity_minions(docs), (std::vector<std::string>{"db1", "web1"}));  // every minion once
  const EntityDoc& db1 = docs[0].minion == "db1" ? docs[0] : docs[1];
  EXPECT_EQ(db1.version, at(1));
  EXPECT_NE(db1.json.find(R"("key_state":"accepted")"), std::string::npos) << db1.json;
  EXPECT_NE(db1.json.find(R"("last_heard_via":"return")"), std::string::npos) << db1.json;
  EXPECT_NE(db1.json.find(R"("last_highstate":null)"), std::string::npos) << db1.json;
  const std::int64_t first = db1.version;

  docs.clear();
  ret("db1", 10);  // a heartbeat inside the interval: nothing
  fleet_.collect_entities(at(10), docs);
  EXPECT_TRUE(docs.empty());
  ret("db1", 62);  // past it: one refresh
  fleet_.collect_entities(at(62), docs);
  ASSERT_EQ(entity_minions(docs), std::vector<std::string>{"db1"});
  EXPECT_GT(docs[0].version, first);
  EXPECT_EQ(docs[0].version, at(62));

  docs.clear();
  fleet_.on_event(highstate_ret("db1", "7", "[]", true), at(63));  // meaningful: at once
  fleet_.collect_entities(at(63), docs);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_NE(docs[0].json.find(R"("last_successful_highstate":{"at":")"), std::string::npos) << docs[0].json;
  EXPECT_NE(docs[0].json.find(R"("jid":"7")"), std::string::npos) << docs[0].json;

  docs.clear();
  ret("db1", 100);
  (void)sweep(104);  // web1 silent for 104 s > 40: the episode is meaningful
  fleet_.collect_entities(at(104), docs);
  ASSERT_EQ(entity_minions(docs), std::vector<std::string>{"web1"});
  EXPECT_NE(docs[0].json.find(R"("silent":true)"), std::string::npos) << docs[0].json;
  EXPECT_EQ(docs[0].version, at(104));  // the episode's detection

  // A deleted key: the last document says so, from the next sweep.
  fleet_.on_event(ev("salt/key", R"({"act": "delete", "id": "db1"})"), at(110));
  const SweepOutcome out = sweep(111);
  ASSERT_EQ(out.entities.size(), 1u);
  EXPECT_EQ(out.entities[0].minion, "db1");
  EXPECT_NE(out.entities[0].json.find(R"("key_state":"deleted")"), std::string::npos);
  EXPECT_GT(out.entities[0].version, at(63));
}

TEST(FleetConfig, ParsesRulesAndRefusesBadOnes) {
  const FleetConfig c = parse_fleet_config(
      YAML::Load(R"({silence: [{match: "lap*", ignore: true}, {match: "*", after_seconds: 90}], sweep_seconds: 2})"));
  ASSERT_EQ(c.silence.size(), 2u);
  EXPECT_TRUE(c.silence[0].ignore);
  EXPECT_EQ(c.silence[1].after, 90 * kSec);
  EXPECT_EQ(c.sweep, 2 * kSec);
  EXPECT_EQ(c.rule_for("laptop"), 0);
  EXPECT_EQ(c.rule_for("web1"), 1);
  EXPECT_EQ(FleetConfig{}.silence.at(0).after, 3600 * kSec);
  EXPECT_THROW(parse_fleet_config(YAML::Load(R"({silence: [{match: "*"}]})")), ConfigError);
  EXPECT_THROW(parse_fleet_config(YAML::Load(R"({sweep_seconds: 0})")), ConfigError);
  EXPECT_THROW(parse_fleet_config(YAML::Load(R"({silence: []})")), ConfigError);
  EXPECT_THROW(parse_fleet_config(YAML::Load(R"({bogus: 1})")), ConfigError);
}

}  // namespace
}  // namespace salttap::fleet
