// `run`'s spool sink on a real IndexerService with both lanes (never
// started: nothing leaves the spools): one spool-full alert per episode of
// each lane, from the live lane's sink (the one the event loop polls),
// naming the lane; the backfill lane's sink raises none of its own.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/document_sinks.h"
#include "tests/support/fake_http.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/search_json.h"
#include "tests/support/spool_fixtures.h"

namespace salttap {
namespace {

using indexer::BulkDoc;
using indexer::DocClass;
using indexer::Lane;

constexpr Micros kNow = 1'800'000'000 * kMicrosPerSecond;

// Documents of one size, so a lane's room is counted in documents.
BulkDoc doc(DocClass cls, int i) { return testing::spool_doc(cls, std::to_string(100 + i)); }
std::uint64_t record_bytes() { return 24 + doc(DocClass::job, 0).ndjson.size(); }

struct Fixture {
  Fixture() {
    config.enabled = true;
    config.backfill_lane = true;
    config.spool.dir = dir.path() / "spool";
    config.spool.max_bytes = 16 * record_bytes();  // the backfill lane: a quarter, four documents
    config.spool.segment_bytes = record_bytes();
    config.backpressure_wait = std::chrono::milliseconds(0);
    service = std::make_unique<indexer::IndexerService>(
        config, time, [] { return 0.5; }, engine.factory());
  }
  // Jobs up to the events share of the lane's room, then one event: refused, the lane is full.
  void fill(Lane lane, int documents) {
    std::vector<BulkDoc> jobs;
    for (int i = 0; i < documents; ++i) jobs.push_back(doc(DocClass::job, i));
    service->spool(
        jobs, [] { return true; }, lane);
    service->spool(
        std::vector<BulkDoc>{doc(DocClass::event, 99)}, [] { return true; }, lane);
  }

  testing::TempDir dir;
  testing::FakeSteadyTime time;
  testing::FakeHttp engine;
  indexer::IndexerConfig config;
  std::unique_ptr<indexer::IndexerService> service;
};

TEST(SpoolSink, EachLaneRaisesOneSpoolFullAlertPerEpisodeNamingTheLane) {
  Fixture f;
  pipeline::SpoolSink live(*f.service);
  pipeline::SpoolSink backfill(*f.service, Lane::backfill);
  EXPECT_FALSE(live.poll_alert("m1", kNow));

  f.fill(Lane::backfill, 3);
  ASSERT_TRUE(f.service->backfill_spool()->stats().full);
  EXPECT_FALSE(backfill.poll_alert("m1", kNow)) << "the live lane's sink raises every lane's";
  const auto first = live.poll_alert("m1", kNow);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->kind, correlator::AlertKind::spool_full);
  auto d = testing::parse_body(first->json);
  EXPECT_STREQ(d["lane"].GetString(), "backfill");
  EXPECT_EQ(d["spool_max_bytes"].GetUint64(), 4 * record_bytes()) << "the lane's own cap";
  EXPECT_EQ(d["spool_bytes"].GetUint64(), 3 * record_bytes());
  EXPECT_EQ(std::string(d["reason"].GetString()).rfind("backfill lane", 0), 0u) << d["reason"].GetString();
  EXPECT_FALSE(live.poll_alert("m1", kNow + 1)) << "one alert per episode";

  f.fill(Lane::live, 13);  // past 80% of sixteen documents
  const auto second = live.poll_alert("m1", kNow + 2);
  ASSERT_TRUE(second);
  d = testing::parse_body(second->json);
  EXPECT_STREQ(d["lane"].GetString(), "live");
  EXPECT_EQ(d["spool_max_bytes"].GetUint64(), 16 * record_bytes());
  EXPECT_FALSE(live.poll_alert("m1", kNow + 3));
  f.service->stop(std::chrono::milliseconds(0));
}

TEST(SpoolSink, AnEpisodeBeforeTheSinkExistedRaisesNoAlert) {
  Fixture f;
  f.fill(Lane::backfill, 3);
  pipeline::SpoolSink live(*f.service);
  EXPECT_FALSE(live.poll_alert("m1", kNow));
  f.service->stop(std::chrono::milliseconds(0));
}

}  // namespace
}  // namespace salttap
