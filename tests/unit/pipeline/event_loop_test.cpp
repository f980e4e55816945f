// The one event loop (events -> correlator -> documents -> sink) with a
// scripted feed and a recording sink: when documents reach the sink, the
// return_flat hand-over, the sink's own alert, the end of a replay; and the
// capture feed's step of the replay clock to each event's _stamp.

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "pipeline/event_loop.h"
#include "tests/support/events.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;
using salttap::testing::ev;

constexpr Micros kStart = 1'800'000'000 * kMicrosPerSecond;

using Batch = std::vector<tap::Event>;

template <typename... Events>
Batch batch(Events&&... events) {
  Batch b;
  (b.push_back(std::forward<Events>(events)), ...);
  return b;
}

// Hands out scripted batches of events.
class ScriptedFeed final : public pipeline::EventFeed {
 public:
  template <typename... Batches>
  explicit ScriptedFeed(Batches&&... batches) {
    (batches_.push_back(std::forward<Batches>(batches)), ...);
  }
  int pump(const OnEvent& on_event, const OnBatchEnd& on_batch_end) override {
    for (const auto& batch : batches_) {
      for (const auto& e : batch) on_event(e);
      on_batch_end();
    }
    return 0;
  }

 private:
  std::vector<Batch> batches_;
};

class RecordingSink final : public pipeline::DocumentSink {
 public:
  void put(std::span<const indexer::BulkDoc> docs, const std::function<bool()>&) override {
    writes.emplace_back(docs.begin(), docs.end());
  }
  std::optional<bool> return_flat() const override {
    ++flat_asked;
    return flat;
  }
  std::optional<correlator::Alert> poll_alert(std::string_view master_id, Micros now) override {
    if (!raise_alert) return std::nullopt;
    raise_alert = false;
    std::string json = R"({"alert":"spool_full","kinds":["spool_full"],"master":")" + std::string(master_id) + R"("})";
    return correlator::Alert{
        correlator::AlertKind::spool_full, {correlator::AlertKind::spool_full}, "", json, now, now};
  }

  std::vector<std::vector<indexer::BulkDoc>> writes;
  std::optional<bool> flat;
  mutable int flat_asked = 0;
  bool raise_alert = false;
};

config::Config config() {
  config::Config c = config::default_config();
  c.master_id = "m1";
  c.indexer.documents.layout.index_date = false;
  return c;
}

tap::Event job_new(int jid) {
  return ev(
      "salt/job/" + std::to_string(jid) + "/new",
      R"({"jid": ")" + std::to_string(jid) +
          R"(", "fun": "grains.items", "arg": [], "tgt": "a", "tgt_type": "glob", "user": "root", "minions": ["a"]})");
}
tap::Event job_ret(int jid) {
  return ev("salt/job/" + std::to_string(jid) + "/ret/a",
            R"({"fun": "grains.items", "return": {"os": "Debian"}, "retcode": 0, "success": true})");
}

std::size_t count(const std::vector<indexer::BulkDoc>& docs, indexer::DocClass cls) {
  return std::count_if(docs.begin(), docs.end(), [&](const indexer::BulkDoc& d) { return d.cls == cls; });
}

TEST(EventLoop, DocumentsGoToTheSinkAtEachBatchEndAndEveryBatchDocsWithinABatch) {
  ManualClock clock{kStart};
  pipeline::DocumentPipeline pipeline(config(), clock);
  RecordingSink sink;
  // Job and return documents; job 3 is one document, in the last batch.
  ScriptedFeed feed(batch(job_new(1), job_ret(1), job_new(2), job_ret(2)), batch(), batch(job_new(3)));
  pipeline::EventLoopOptions options;
  options.batch_docs = 3;
  int batches = 0;
  options.after_batch = [&] { ++batches; };
  EXPECT_EQ(pipeline::run_event_loop(feed, pipeline, sink, options), 0);
  EXPECT_EQ(batches, 3);
  ASSERT_GE(sink.writes.size(), 3u);
  std::size_t total = 0;
  for (const auto& w : sink.writes) {
    EXPECT_FALSE(w.empty()) << "no empty writes";
    total += w.size();
  }
  EXPECT_EQ(total, pipeline.documents().stats().built[0] + pipeline.documents().stats().built[1] +
                       pipeline.documents().stats().built[2] + pipeline.documents().stats().built[3] +
                       pipeline.documents().stats().built[4]);
  EXPECT_GE(sink.writes[0].size(), 3u) << "the first write came once 3 documents waited";
  ASSERT_EQ(sink.writes.back().size(), 1u);
  EXPECT_NE(sink.writes.back()[0].ndjson.find(R"("jid":"3")"), std::string::npos) << "job 3, at its batch end";
}

TEST(EventLoop, ReturnFlatIsHandedOverOnceTheSinkKnowsIt) {
  ManualClock clock{kStart};
  config::Config c = config();
  c.indexer.documents.return_flat = false;  // until the sink knows
  pipeline::DocumentPipeline pipeline(c, clock);
  RecordingSink sink;
  ScriptedFeed feed(batch(job_new(1), job_ret(1)), batch(), batch(job_new(2), job_ret(2)));
  pipeline::EventLoopOptions options;
  options.after_batch = [&] { sink.flat = true; };  // setup succeeds after the first batch
  pipeline::run_event_loop(feed, pipeline, sink, options);
  std::vector<std::string> returns;
  for (const auto& w : sink.writes)
    for (const auto& d : w)
      if (d.cls == indexer::DocClass::ret) returns.push_back(d.ndjson);
  ASSERT_EQ(returns.size(), 2u);
  EXPECT_EQ(returns[0].find("return_flat"), std::string::npos) << "built before setup";
  EXPECT_NE(returns[1].find(R"("return_flat":{"os":"Debian"})"), std::string::npos) << returns[1];
  const int asked = sink.flat_asked;
  EXPECT_LE(asked, 3) << "not asked again once known";
}

TEST(EventLoop, TheSinksAlertGoesThroughEveryOutletAndIntoTheAlertsIndex) {
  ManualClock clock{kStart};
  pipeline::DocumentPipeline pipeline(config(), clock);
  struct Recording : alerting::AlertOutlet {
    void send(const correlator::Alert& a) override { alerts.push_back(a); }
    std::vector<correlator::Alert> alerts;
  };
  auto outlet = std::make_shared<Recording>();
  pipeline.add_alert_outlet(outlet);
  RecordingSink sink;
  sink.raise_alert = true;
  ScriptedFeed feed(batch(job_new(1)), batch(job_ret(1)));
  pipeline::run_event_loop(feed, pipeline, sink, {});
  ASSERT_EQ(outlet->alerts.size(), 1u);
  EXPECT_EQ(outlet->alerts[0].kind, correlator::AlertKind::spool_full);
  EXPECT_EQ(pipeline.alerts().count(correlator::AlertKind::spool_full), 1u);
  ASSERT_GE(sink.writes.size(), 2u);
  EXPECT_EQ(count(sink.writes[1], indexer::DocClass::alert), 1u) << "with the next batch's documents";
}

TEST(EventLoop, AtTheEndOfAReplayOpenJobsSettleAndTheRestIsWritten) {
  ManualClock clock{kStart};
  pipeline::DocumentPipeline pipeline(config(), clock);
  RecordingSink sink;
  ScriptedFeed feed(batch(job_new(1)));  // minion a never returns
  pipeline::EventLoopOptions options;
  options.settle_at_end = true;
  pipeline::run_event_loop(feed, pipeline, sink, options);
  ASSERT_FALSE(sink.writes.empty());
  const auto& last = sink.writes.back();
  ASSERT_GE(count(last, indexer::DocClass::job), 1u);
  EXPECT_NE(last.back().ndjson.find("\"missing\""), std::string::npos) << last.back().ndjson;
}

TEST(CaptureFeed, StepsTheReplayClockToEachEventsStampAndNeverBack) {
  char tmpl[] = "/tmp/salttap-event-feed-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  const fs::path capture = dir / "capture.jsonl";
  std::ofstream(capture) << R"({"tag": "a", "data": {"_stamp": "2027-01-15T08:00:00.000000"}})"
                            "\n"
                         << R"({"tag": "b", "data": {"_stamp": "2027-01-15T08:00:05.500000"}})"
                            "\n"
                         << R"({"tag": "c", "data": {"_stamp": "2027-01-15T08:00:01.000000"}})"
                            "\n"
                         << R"({"tag": "d", "data": {}})"
                            "\n";
  ManualClock clock;
  pipeline::CaptureFeed feed({(dir / "missing.jsonl").string(), capture.string()}, tap::DecodeLimits{}, &clock);
  std::vector<std::pair<std::string, Micros>> seen;
  int batch_ends = 0;
  const int rc = feed.pump([&](const tap::Event& e) { seen.emplace_back(std::string(e.tag()), clock.now()); },
                           [&] { ++batch_ends; });
  fs::remove_all(dir);
  EXPECT_EQ(rc, 1) << "a file that cannot be read";
  EXPECT_EQ(batch_ends, 0) << "a capture is one stream";
  const std::vector<std::pair<std::string, Micros>> expected = {
      {"a", kStart}, {"b", kStart + 5'500'000}, {"c", kStart + 5'500'000}, {"d", kStart + 5'500'000}};
  EXPECT_EQ(seen, expected);
}

// `run` feeds systemd's watchdog at each batch end: an idle bus must still end batches.
TEST(LiveFeed, EndsABatchAtEveryPollWhenTheBusIsIdle) {
  tap::EventQueue queue;
  int batch_ends = 0;
  pipeline::LiveFeed feed(
      queue, [&] { return batch_ends >= 3; }, std::chrono::milliseconds(5));
  int events = 0;
  EXPECT_EQ(feed.pump([&](const tap::Event&) { ++events; }, [&] { ++batch_ends; }), 0);
  EXPECT_EQ(batch_ends, 3);
  EXPECT_EQ(events, 0);
}

}  // namespace
}  // namespace salttap
