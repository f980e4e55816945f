// The fleet state file across a restart, the accepted keys from the key
// directory, and a state file that is not ours.

#include <gtest/gtest.h>

#include <fstream>

#include "fleet/fleet_keeper.h"
#include "fleet/fleet_state_format.h"
#include "tests/support/events.h"
#include "tests/support/fleet_clock.h"
#include "tests/support/temp_dir.h"

namespace salttap::fleet {
namespace {

using salttap::testing::ev;
using salttap::testing::kSec;
using salttap::testing::kT0;

FleetConfig quick() {
  FleetConfig c;
  c.silence = {{"*", false, 20 * kSec}};
  c.sweep = 1 * kSec;
  return c;
}

class FleetKeeperTest : public ::testing::Test {
 protected:
  FleetKeeperTest() : clock_(kT0) {
    std::filesystem::create_directories(keys());
    for (const char* m : {"db1", "web1"}) std::ofstream(keys() / m) << "key";
  }
  std::filesystem::path keys() const { return dir_.path() / "minions"; }
  std::filesystem::path state() const { return dir_.path() / "fleet.state"; }
  std::unique_ptr<FleetKeeper> keeper() { return std::make_unique<FleetKeeper>(quick(), keys(), state(), "m", clock_); }
  void at(Micros s) { clock_.set(kT0 + s * kSec); }

  testing::TempDir dir_;
  ManualClock clock_;
};

TEST_F(FleetKeeperTest, KeysAreTheExpectedFleet) {
  auto k = keeper();
  (void)k->tick(true);
  EXPECT_TRUE(k->tracker().keys_known());
  EXPECT_TRUE(k->tracker().find("db1")->expected);
  EXPECT_TRUE(k->tracker().find("web1")->expected);
}

TEST_F(FleetKeeperTest, UnreadableKeysFallBackToTheHeardFleet) {
  FleetKeeper k(quick(), dir_.path() / "absent", state(), "m", clock_);
  (void)k.tick(true);
  EXPECT_FALSE(k.tracker().keys_known());
}

TEST_F(FleetKeeperTest, ARestartKeepsTheEpisodeAndCountsTheDowntimeBlind) {
  auto k = keeper();
  (void)k->tick(true);
  k->tracker().on_event(ev("salt/job/1/ret/web1", R"({"id": "web1", "fun": "test.ping"})"), clock_.now());
  at(21);
  const SweepOutcome first = k->tick(true);
  ASSERT_EQ(first.notices.size(), 2u);  // both silent: db1 never heard, web1 heard at 0
  k->tracker().on_event(ev("salt/job/2/ret/web1", R"({"id": "web1", "fun": "test.ping"})"), clock_.now());
  at(22);
  ASSERT_EQ(k->tick(true).notices.size(), 1u);  // web1 recovered
  k->write_state();
  k.reset();  // down from 22 to 500

  at(500);
  k = keeper();
  EXPECT_TRUE(k->tracker().blind());
  EXPECT_EQ(k->tracker().find("db1")->liveness, Liveness::silent);
  at(501);
  EXPECT_TRUE(k->tick(true).notices.empty());  // db1's episode is the same one; web1 lost nothing while down
  at(520);
  EXPECT_TRUE(k->tick(true).notices.empty());  // web1: 0 + 19 s heard
  at(524);
  const SweepOutcome later = k->tick(true);
  ASSERT_EQ(later.notices.size(), 1u);
  EXPECT_NE(later.notices[0].json.find(R"("minion":"web1")"), std::string::npos);
}

TEST_F(FleetKeeperTest, AStateFileNotOursIsSetAsideAndCounted) {
  std::ofstream(state()) << "{\"format\": \"something else\"}";
  auto k = keeper();
  EXPECT_EQ(k->stats().state_errors, 1u);
  EXPECT_EQ(k->tracker().size(), 0u);
}

TEST(FleetStateFormat, RoundTripsAndRefusesWhatItDidNotWrite) {
  FleetSnapshot s;
  s.saved_at = 5;
  s.blind_total = 3;
  s.keys_known = true;
  MinionEntity m;
  m.last_heard = 10;
  m.via = HeardVia::beacon;
  m.silent_since = 10;
  m.liveness = Liveness::silent;
  m.last_highstate = {.at = 9, .jid = "20261205120000123456", .succeeded = false, .test = true};
  m.last_successful_highstate = {.at = 7, .jid = "20261205110000123456", .succeeded = true, .test = false};
  s.minions = {{"a", m}, {"b", MinionEntity{}}};
  const std::string text = encode_fleet_state(s);
  const auto back = decode_fleet_state(text);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(encode_fleet_state(back.value()), text);
  EXPECT_EQ(back.value().minions[0].second.via, HeardVia::beacon);
  EXPECT_EQ(back.value().minions[0].second.last_highstate, m.last_highstate);
  EXPECT_EQ(back.value().minions[0].second.last_successful_highstate, m.last_successful_highstate);

  for (const char* bad : {"", "[]", "{\"format\": \"salttap-fleet\", \"version\": 3}",
                          "{\"format\": \"salttap-fleet\", \"version\": 1, \"saved_at\": -1}"}) {
    EXPECT_FALSE(decode_fleet_state(bad)) << bad;
  }
  std::string no_jid_time = text;
  no_jid_time.replace(no_jid_time.find(R"("at":9)"), 6, R"("at":0)");
  EXPECT_FALSE(decode_fleet_state(no_jid_time));
  std::string unsorted = text;
  const auto a = unsorted.find(R"("id":"a")");
  unsorted[a + 6] = 'c';  // "c" before "b"
  const auto refused = decode_fleet_state(unsorted);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("not sorted"), std::string::npos);
}

// A version 1 file (before the highstates) is still read: an upgrade keeps
// every minion's silence clock and knows no highstate yet.
TEST(FleetStateFormat, ReadsTheFormerVersion) {
  const std::string v1 =
      R"({"format":"salttap-fleet","version":1,"saved_at":5,"blind_total":0,"keys_known":true,"minions":[)"
      R"({"id":"db1","last_heard":4,"blind_at_heard":0,"via":"return","last_connected":0,"blind_at_connected":0,)"
      R"("connected":false,"expected":true,"expected_since":1,"blind_at_expected":0,"silent_since":0,)"
      R"("detected_at":0,"window":0,"liveness":"ok"}]})";
  const auto s = decode_fleet_state(v1);
  ASSERT_TRUE(s) << s.error();
  ASSERT_EQ(s.value().minions.size(), 1u);
  EXPECT_EQ(s.value().minions[0].second.last_heard, 4);
  EXPECT_EQ(s.value().minions[0].second.last_highstate, HighstateRun{});
  EXPECT_NE(encode_fleet_state(s.value()).find(R"("version":3)"), std::string::npos);
}

}  // namespace
}  // namespace salttap::fleet
