// The spool's two lanes behind one RecordSource: live records go ahead of
// backfill records, a taker waiting on both wakes for either, acks reach the
// lane a record came from, and each lane keeps the spool's promises (what is
// not acknowledged is handed out again after a restart, in order; what is
// acknowledged is not). Waits run on fake time: no outcome depends on how
// fast the machine is.

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "indexer/spool.h"
#include "indexer/spool_lanes.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/spool_fixtures.h"

namespace salttap::indexer {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::append_all;
using testing::FakeSteadyTime;
using testing::payloads_of;
using testing::spool_config;
using testing::TempDir;

BulkDoc job(const std::string& text) { return testing::spool_doc(DocClass::job, text); }

std::vector<BulkDoc> jobs(const std::string& prefix, int n) {
  std::vector<BulkDoc> out;
  for (int i = 0; i < n; ++i) out.push_back(job(prefix + std::to_string(i)));
  return out;
}

std::vector<std::string> payloads(const std::vector<BulkDoc>& docs) {
  std::vector<std::string> out;
  for (const auto& d : docs) out.push_back(d.ndjson);
  return out;
}

// Both lanes of one spool directory, as IndexerService opens them.
struct Lanes {
  Lanes(const fs::path& dir, SteadyTime& time)
      : live(spool_config(dir), time),
        backfill(backfill_lane_config(spool_config(dir)), time),
        lanes(live, backfill, time) {}
  Spool live;
  Spool backfill;
  SpoolLanes lanes;
};

// Everything the lanes hand out now, without waiting, in the order handed out.
std::vector<SpoolRecord> take_all(SpoolLanes& lanes) {
  std::vector<SpoolRecord> all;
  for (;;) {
    auto got = lanes.take(1000, 1u << 30, 0ms);
    if (got.empty()) return all;
    std::move(got.begin(), got.end(), std::back_inserter(all));
  }
}

// A take of the lanes that waits up to `wait`, on a thread of its own, once it waits.
std::future<std::vector<SpoolRecord>> waiting_take(SpoolLanes& lanes, FakeSteadyTime& time,
                                                   std::chrono::milliseconds wait) {
  auto taken = std::async(std::launch::async, [&lanes, wait] { return lanes.take(1000, 1u << 30, wait); });
  time.await_waiters(1);
  return taken;
}

// A take that waits 2 s returns nothing once the clock reaches its deadline, not before.
void expect_a_take_to_time_out(SpoolLanes& lanes, FakeSteadyTime& time) {
  const auto start = time.now();
  auto taken = waiting_take(lanes, time, 2s);
  time.advance_to_next_deadline();
  ASSERT_EQ(taken.wait_for(60s), std::future_status::ready);
  EXPECT_TRUE(taken.get().empty());
  EXPECT_EQ(time.now() - start, 2s);
}

TEST(SpoolLanes, LiveRecordsGoAheadOfBackfillRecordsAppendedBefore) {
  TempDir dir;
  FakeSteadyTime time;
  Lanes l(dir.path(), time);
  append_all(l.backfill, jobs("cache", 5));
  append_all(l.live, jobs("live", 2));
  const auto first = l.lanes.take(1000, 1u << 30, 0ms);
  EXPECT_EQ(payloads_of(first), payloads(jobs("live", 2)));
  for (const auto& r : first) EXPECT_EQ(SpoolLanes::lane_of(r.id), Lane::live);
  // A live record appended while backfill records wait still goes first.
  append_all(l.live, {job("live-late")});
  EXPECT_EQ(payloads_of(l.lanes.take(1000, 1u << 30, 0ms)), payloads({job("live-late")}));
  const auto rest = l.lanes.take(1000, 1u << 30, 0ms);
  EXPECT_EQ(payloads_of(rest), payloads(jobs("cache", 5))) << "the backfill lane in its own order";
  for (const auto& r : rest) EXPECT_EQ(SpoolLanes::lane_of(r.id), Lane::backfill);
  EXPECT_TRUE(l.lanes.take(1000, 1u << 30, 0ms).empty());
}

TEST(SpoolLanes, ATakerWaitingOnBothLanesWakesForEither) {
  TempDir dir;
  FakeSteadyTime time;
  Lanes l(dir.path(), time);
  for (const bool backfill : {true, false}) {
    auto taken = waiting_take(l.lanes, time, 10s);
    const auto before = time.now();
    append_all(backfill ? l.backfill : l.live, {job(backfill ? "cache" : "live")});
    ASSERT_EQ(taken.wait_for(60s), std::future_status::ready);
    const auto got = taken.get();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(SpoolLanes::lane_of(got[0].id), backfill ? Lane::backfill : Lane::live);
    EXPECT_EQ(time.now(), before) << "woken by the append, not by its deadline";
  }
}

TEST(SpoolLanes, AWakeWithNoTakeWaitingCountsForTheNextTakeOnly) {
  TempDir dir;
  FakeSteadyTime time;
  Lanes l(dir.path(), time);
  l.lanes.wake_takers();  // before any take, as a stop() just ahead of the preparer's take
  const auto before = time.now();
  auto first = std::async(std::launch::async, [&] { return l.lanes.take(1000, 1u << 30, 10s); });
  const bool at_once = first.wait_for(60s) == std::future_status::ready;
  if (!at_once) l.lanes.wake_takers();  // so that the test fails instead of hanging
  ASSERT_TRUE(at_once) << "it waited for the clock";
  EXPECT_TRUE(first.get().empty());
  EXPECT_EQ(time.now(), before);
  expect_a_take_to_time_out(l.lanes, time);  // the wake is spent: this one waits
}

TEST(SpoolLanes, WakeTakersReturnsAWaitingTakeAtOnceAndATimeoutReturnsNothing) {
  TempDir dir;
  FakeSteadyTime time;
  Lanes l(dir.path(), time);
  auto taken = waiting_take(l.lanes, time, 10s);
  const auto before = time.now();
  l.lanes.wake_takers();
  ASSERT_EQ(taken.wait_for(60s), std::future_status::ready);
  EXPECT_TRUE(taken.get().empty());
  EXPECT_EQ(time.now(), before);
  expect_a_take_to_time_out(l.lanes, time);
}

TEST(SpoolLanes, AcksReachTheirLaneAndARestartHandsOutExactlyWhatWasNotAcked) {
  TempDir dir;
  FakeSteadyTime time;
  {
    Lanes l(dir.path(), time);
    append_all(l.live, jobs("live", 4));
    append_all(l.backfill, jobs("cache", 4));
    const auto taken = take_all(l.lanes);
    ASSERT_EQ(taken.size(), 8u);
    // Acknowledge live 0, 1, 3 and cache 0, 2 (out of order, as several requests in flight do).
    l.lanes.ack(std::vector{taken[3].id, taken[0].id, taken[1].id, taken[6].id, taken[4].id});
    EXPECT_EQ(l.live.stats().acked_records, 3u);
    EXPECT_EQ(l.backfill.stats().acked_records, 2u);
    EXPECT_EQ(l.live.stats().unknown_acks + l.backfill.stats().unknown_acks, 0u);
    EXPECT_EQ(l.live.stats().pending_records, 1u);
    EXPECT_EQ(l.backfill.stats().pending_records, 2u);
    // Gone without close(): as after kill -9, only the ledgers on disk count.
  }
  {
    Lanes again(dir.path(), time);
    EXPECT_TRUE(fs::exists(dir.path() / "backfill" / "ledger")) << "the backfill lane is a spool of its own";
    // The ledger moves over a contiguous prefix: live 0-1 acked, 2-3 resent
    // (3 again: a 409 at the engine); cache 0 acked, 1-3 resent.
    const auto resent = take_all(again.lanes);
    std::vector<std::string> expect = {jobs("live", 4)[2].ndjson, jobs("live", 4)[3].ndjson};
    for (int i = 1; i < 4; ++i) expect.push_back(jobs("cache", 4)[static_cast<std::size_t>(i)].ndjson);
    EXPECT_EQ(payloads_of(resent), expect);
    again.lanes.ack(testing::ids_of(resent));
  }  // closed: the ledgers written
  Lanes third(dir.path(), time);
  EXPECT_TRUE(take_all(third.lanes).empty()) << "acknowledged in both lanes: nothing comes back";
  EXPECT_EQ(third.live.recovery().pending_records + third.backfill.recovery().pending_records, 0u);
}

TEST(SpoolLanes, TheLiveLaneIgnoresTheBackfillLaneInsideItsDirectory) {
  TempDir dir;
  FakeSteadyTime time;
  {
    Lanes l(dir.path(), time);
    append_all(l.backfill, jobs("cache", 3));
  }
  Spool live(spool_config(dir.path()), time);
  EXPECT_EQ(live.recovery().pending_records, 0u);
  EXPECT_EQ(live.recovery().corrupt_records, 0u);
  Spool backfill(backfill_lane_config(spool_config(dir.path())), time);
  EXPECT_EQ(backfill.recovery().pending_records, 3u);
}

TEST(SpoolLanes, TheBackfillLaneHasAQuarterOfTheCapInASubdirectory) {
  SpoolConfig live;
  live.dir = "/var/lib/salttap/spool";
  live.max_bytes = 1ull << 30;
  live.segment_bytes = 64ull << 20;
  const SpoolConfig b = backfill_lane_config(live);
  EXPECT_EQ(b.dir, fs::path("/var/lib/salttap/spool/backfill"));
  EXPECT_EQ(b.max_bytes, 256ull << 20);
  EXPECT_EQ(b.segment_bytes, 64ull << 20);
  EXPECT_EQ(b.fsync, live.fsync);
}

}  // namespace
}  // namespace salttap::indexer
