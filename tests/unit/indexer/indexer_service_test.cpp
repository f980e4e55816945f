// IndexerService on fake time, a fake engine (FakeHttp) and a real spool in a
// temporary directory: setup gates shipping, setup retries follow the common
// backoff, stop() interrupts the setup's wait, and a full spool makes the
// pipeline offer exactly the documents that did not fit until they do - or
// count them lost when told to give up.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <future>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "indexer/indexer_service.h"
#include "tests/support/fake_http.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/temp_dir.h"

namespace salttap::indexer {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using salttap::testing::FakeHttp;
using salttap::testing::FakeSteadyTime;
using salttap::testing::TempDir;

constexpr const char* kEs8 = R"({"name":"es01","version":{"number":"8.15.3","build_flavor":"default",
  "lucene_version":"9.11.1"},"tagline":"You Know, for Search"})";

// Job documents of one size, so the spool's room is counted in documents.
BulkDoc job_doc(int i) {
  return {DocClass::job, fmt::format(R"({{"index":{{"_index":"salt-jobs","_id":"j{:03}"}}}})"
                                     "\n"
                                     R"({{"jid":"{:03}"}})"
                                     "\n",
                                     i, i)};
}
std::uint64_t record_bytes() { return 24 + job_doc(0).ndjson.size(); }

// The documents' _ids in a bulk body ("<action>\n<source>\n" each).
std::vector<std::string> ids_in(const std::string& body) {
  std::vector<std::string> ids;
  std::istringstream lines(body);
  std::string action, source;
  while (std::getline(lines, action) && std::getline(lines, source)) {
    constexpr std::string_view kId = R"("_id":")";
    const auto at = action.find(kId) + kId.size();
    ids.push_back(action.substr(at, action.find('"', at) - at));
  }
  return ids;
}

// An Elasticsearch 8 that takes templates and documents while `up`.
class Engine {
 public:
  Engine()
      : http_([this](const http::HttpRequest& r) {
          if (!up) return FakeHttp::reply(0);
          if (r.method == "GET" && r.path == "/") {
            http::HttpResponse banner = FakeHttp::reply(200, kEs8);
            banner.product = "Elasticsearch";
            return banner;
          }
          if (r.method == "GET" && r.path.starts_with("/_cluster/health")) {
            if (no_manager) return FakeHttp::reply(503, R"({"error":{"type":"master_not_discovered_exception"}})");
            return FakeHttp::reply(200, R"({"status":"yellow","number_of_nodes":3})");
          }
          if (r.method == "POST" && r.path.starts_with("/_bulk")) {
            std::string items;
            for (std::size_t i = 0; i < ids_in(r.body).size(); ++i)
              items += std::string(i ? "," : "") + R"({"index":{"status":201}})";
            return FakeHttp::reply(200, R"({"errors":false,"items":[)" + items + "]}");
          }
          return FakeHttp::reply(200, R"({"acknowledged":true})");
        }) {}

  FakeHttp& http() { return http_; }
  std::size_t banner_requests() const { return http_.count("GET", "/"); }
  std::vector<std::string> shipped_ids() const {
    std::vector<std::string> ids;
    for (const auto& r : http_.requests())
      if (r.method == "POST" && r.path.starts_with("/_bulk"))
        for (auto& id : ids_in(r.body)) ids.push_back(std::move(id));
    return ids;
  }

  std::atomic<bool> up{false};
  std::atomic<bool> no_manager{false};  // _cluster/health: 503, no elected master

 private:
  FakeHttp http_;
};

struct Harness {
  explicit Harness(IndexerConfig config = base_config()) : config_(std::move(config)) {
    config_.spool.dir = dir.path() / "spool";
  }
  static IndexerConfig base_config() {
    IndexerConfig c;
    c.enabled = true;
    c.setup_backoff = {1s, 4s};
    c.shipper.in_flight = 1;
    c.shipper.batch.max_docs = 1;  // a document is a full batch: no batch window to wait for
    c.backpressure_wait = 1ms;
    c.spool.segment_bytes = record_bytes();  // one document per segment: each ack frees room
    c.cluster_health_interval = 0ms;         // one waiter less on the fake time (its own test below)
    return c;
  }
  IndexerService& make() {
    service = std::make_unique<IndexerService>(
        config_, time, [] { return 0.999999; }, engine.http().factory());
    return *service;
  }
  // Blocks until the setup thread made its n-th attempt and sleeps in its backoff.
  void await_setup_backoff(std::size_t attempt) {
    engine.http().await([&] { return engine.banner_requests() >= attempt; });
    time.await_waiters(1);
  }
  double metric(const std::string& sample) const {
    Metrics m;
    service->publish(m);
    const std::string text = m.render();
    const auto at = text.find("\n" + sample + " ");
    if (at == std::string::npos) throw std::runtime_error("no sample " + sample);
    return std::stod(text.substr(at + sample.size() + 2));
  }

  TempDir dir;
  IndexerConfig config_;
  FakeSteadyTime time;
  Engine engine;
  std::unique_ptr<IndexerService> service;
};

TEST(IndexerService, NothingShipsBeforeSetupWhichIsRetriedWithTheBackoff) {
  Harness h;
  IndexerService& service = h.make();
  service.spool(std::vector<BulkDoc>{job_doc(1), job_doc(2)}, [] { return false; });
  service.start();
  // Capped exponential with full jitter (pinned at the top of its range):
  // 1 s, 2 s, then the configured 4 s cap.
  const std::vector<SteadyTime::duration> expected = {1s, 2s, 4s, 4s};
  for (std::size_t failed = 1; failed <= expected.size(); ++failed) {
    h.await_setup_backoff(failed);
    EXPECT_FALSE(service.return_flat().has_value()) << "known only after setup";
    EXPECT_FALSE(service.setup_done());
    const auto before = h.time.now();
    h.time.advance_to_next_deadline();
    EXPECT_EQ(h.time.now() - before, expected[failed - 1]) << "after attempt " << failed;
  }
  h.await_setup_backoff(expected.size() + 1);
  EXPECT_EQ(h.engine.http().count("POST", "/_bulk"), 0u) << "nothing ships before setup";
  EXPECT_EQ(h.metric("salttap_indexer_setup_failures_total{reason=\"transport\"}"), 5);

  h.engine.up = true;
  // The setup's next attempt succeeds; the shipper's windows run on the same time.
  h.time.advance_until([&] { return h.engine.shipped_ids().size() >= 2; });
  auto shipped = h.engine.shipped_ids();
  std::sort(shipped.begin(), shipped.end());  // two workers: either order
  EXPECT_EQ(shipped, (std::vector<std::string>{"j001", "j002"}));
  EXPECT_TRUE(service.setup_done());
  EXPECT_EQ(service.return_flat(), std::optional<bool>(true)) << "Elasticsearch 8 maps return_flat (flattened)";
  // The templates went out before the first document.
  const auto requests = h.engine.http().requests();
  const auto first_bulk = std::find_if(requests.begin(), requests.end(),
                                       [](const http::HttpRequest& r) { return r.path.starts_with("/_bulk"); });
  EXPECT_TRUE(std::any_of(requests.begin(), first_bulk, [](const http::HttpRequest& r) {
    return r.method == "PUT" && r.path.starts_with("/_index_template/");
  }));
  service.stop(0ms);
}

TEST(IndexerService, OnceShippingRunsTheClusterHealthIsPolledAndPublished) {
  IndexerConfig config = Harness::base_config();
  config.cluster_health_interval = 10s;
  Harness h(config);
  h.engine.up = true;
  IndexerService& service = h.make();
  EXPECT_EQ(h.metric("salttap_indexer_cluster_status{status=\"unknown\"}"), 1) << "before the first answer";
  EXPECT_EQ(h.metric("salttap_indexer_cluster_nodes"), -1);
  EXPECT_EQ(h.metric("salttap_indexer_hosts_configured"), 1);
  service.start();
  // The answer is read just after the request: wait (in real time, bounded) for it to be taken in.
  const auto read = [&](ClusterStatus want) {
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (service.cluster_health().status != want && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(1ms);
    return service.cluster_health().status == want;
  };
  ASSERT_TRUE(read(ClusterStatus::yellow));
  EXPECT_EQ(h.metric("salttap_indexer_cluster_status{status=\"yellow\"}"), 1);
  EXPECT_EQ(h.metric("salttap_indexer_cluster_status{status=\"green\"}"), 0);
  EXPECT_EQ(h.metric("salttap_indexer_cluster_nodes"), 3);
  EXPECT_EQ(service.cluster_health().status, ClusterStatus::yellow);
  EXPECT_NE(service.engine_summary().find("cluster yellow, 3 nodes"), std::string::npos) << service.engine_summary();
  EXPECT_EQ(h.engine.http().count("GET", "/_cluster/health"), 1u) << "one poll per interval";

  h.engine.no_manager = true;
  h.time.advance_until([&] { return h.engine.http().count("GET", "/_cluster/health") >= 2; });
  ASSERT_TRUE(read(ClusterStatus::red));
  EXPECT_EQ(h.metric("salttap_indexer_cluster_status{status=\"red\"}"), 1);
  EXPECT_EQ(h.metric("salttap_indexer_cluster_nodes"), 3) << "a 503 names no count: the last one stays";
  const auto health = h.engine.http().requests();
  for (const auto& r : health) {
    if (r.path.starts_with("/_cluster/health")) {
      EXPECT_FALSE(r.failover_on_unavailable) << r.path;
    }
  }
  service.stop(0ms);
}

TEST(IndexerService, LiveDocumentsShipAheadOfTheBackfillLaneWhichIsASpoolOfItsOwn) {
  IndexerConfig config = Harness::base_config();
  config.backfill_lane = true;
  Harness h(config);
  h.engine.up = true;
  IndexerService& service = h.make();
  std::vector<BulkDoc> cache, live;
  for (int i = 10; i < 16; ++i) cache.push_back(job_doc(i));
  for (int i = 1; i < 3; ++i) live.push_back(job_doc(i));
  service.spool(
      cache, [] { return false; }, Lane::backfill);
  service.spool(live, [] { return false; });  // after the cache's documents
  EXPECT_EQ(service.pending(Lane::backfill), 6u);
  EXPECT_EQ(service.pending(Lane::live), 2u);
  EXPECT_EQ(service.pending(), 8u);
  EXPECT_TRUE(fs::exists(h.dir.path() / "spool" / "backfill" / "ledger"));
  service.start();
  h.time.advance_until([&] { return h.engine.shipped_ids().size() >= 8 && service.pending() == 0; });
  EXPECT_EQ(h.engine.shipped_ids(),
            (std::vector<std::string>{"j001", "j002", "j010", "j011", "j012", "j013", "j014", "j015"}))
      << "the live lane first, then the backfill lane in its order";
  service.stop(0ms);
}

TEST(IndexerService, StopDuringTheSetupWaitReturnsAtOnce) {
  Harness h;
  IndexerService& service = h.make();
  service.start();
  h.await_setup_backoff(1);
  const auto before = h.time.now();
  auto stopped = std::async(std::launch::async, [&] { service.stop(0ms); });
  ASSERT_EQ(stopped.wait_for(60s), std::future_status::ready) << "stop() waited for the backoff";
  EXPECT_EQ(h.time.now(), before) << "no time had to pass";
  EXPECT_EQ(h.engine.banner_requests(), 1u);
  EXPECT_FALSE(service.setup_done());
}

TEST(IndexerService, AFullSpoolTakesExactlyTheDocumentsThatDidNotFitOnceThereIsRoom) {
  IndexerConfig config = Harness::base_config();
  config.spool.max_bytes = 3 * record_bytes();  // room for three documents
  config.backpressure_wait = 500ms;             // times out before the setup's 1 s retry
  Harness h(config);
  IndexerService& service = h.make();
  service.start();
  h.await_setup_backoff(1);  // the engine is down: nothing leaves the spool
  service.spool(std::vector<BulkDoc>{job_doc(1), job_doc(2)}, [] { return false; });

  // j003 fits, j004 and j005 wait for room, on the same (fake) time as the setup's backoff.
  std::atomic<int> asked = 0;
  auto spooled = std::async(std::launch::async, [&] {
    service.spool(std::vector<BulkDoc>{job_doc(3), job_doc(4), job_doc(5)}, [&] {
      ++asked;
      return false;  // never gives up
    });
  });
  h.time.await_waiters(2);  // the setup's backoff and the back-pressure wait
  EXPECT_EQ(asked.load(), 0) << "no time has passed: nothing timed out yet";
  EXPECT_EQ(service.spool_ref().stats().appended_records, 3u);

  // The wait times out while the engine is still down (0.5 s < the 1 s retry).
  h.time.advance_until([&] { return asked.load() >= 1; }, 2);
  EXPECT_EQ(service.spool_ref().stats().appended_records, 3u);

  // The engine comes back: once time reaches the setup's retry, setup
  // succeeds, the shipper drains the spool and the waiting documents fit.
  h.engine.up = true;
  h.time.advance_until([&] { return spooled.wait_for(0s) == std::future_status::ready; });
  spooled.get();
  const SpoolStats stats = service.spool_ref().stats();
  EXPECT_EQ(stats.appended_records, 5u) << "each document spooled once";
  EXPECT_EQ(
      stats.dropped[static_cast<std::size_t>(DocClass::job)],
      stats.dropped_by_reason[static_cast<std::size_t>(DropReason::timed_out)][static_cast<std::size_t>(DocClass::job)])
      << "jobs only waited";
  h.time.advance_until([&] { return h.engine.shipped_ids().size() >= 5; });
  // Each document exactly once; two shipper workers may deliver them in either order.
  auto shipped = h.engine.shipped_ids();
  std::sort(shipped.begin(), shipped.end());
  EXPECT_EQ(shipped, (std::vector<std::string>{"j001", "j002", "j003", "j004", "j005"}));
  EXPECT_EQ(h.metric("salttap_spool_backpressure_waits_total"), 1);
  // j004 timed out at least once (above); whether again, or j005 too, depends on when the shipper freed room.
  EXPECT_GE(h.metric("salttap_spool_backpressure_timeouts_total{class=\"job\"}"), 1);
  EXPECT_EQ(h.metric("salttap_spool_dropped_documents_total{class=\"job\",reason=\"stopped_while_full\"}"), 0);
  service.stop(0ms);
}

TEST(IndexerService, GivingUpOnAFullSpoolCountsTheRestLostAndLogsIt) {
  IndexerConfig config = Harness::base_config();
  config.spool.max_bytes = 3 * record_bytes();
  config.backpressure_wait = 1s;
  Harness h(config);
  IndexerService& service = h.make();  // never started: nothing leaves the spool
  service.spool(std::vector<BulkDoc>{job_doc(1), job_doc(2)}, [] { return false; });
  ::testing::internal::CaptureStderr();
  auto spooled = std::async(std::launch::async, [&] {
    service.spool(std::vector<BulkDoc>{job_doc(3), job_doc(4), job_doc(5)}, [] { return true; });
  });
  h.time.await_waiters(1);  // the back-pressure wait: it gives up only once its time is up
  EXPECT_EQ(h.metric("salttap_spool_dropped_documents_total{class=\"job\",reason=\"stopped_while_full\"}"), 0);
  h.time.advance_to_next_deadline();
  spooled.get();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("indexer: stopping with a full live spool: 2 job/return/alert documents not spooled"),
            std::string::npos)
      << log;
  EXPECT_EQ(service.spool_ref().stats().appended_records, 3u);
  EXPECT_EQ(h.metric("salttap_spool_dropped_documents_total{class=\"job\",reason=\"stopped_while_full\"}"), 2);
  EXPECT_EQ(h.metric("salttap_spool_dropped_documents_total{class=\"return\",reason=\"stopped_while_full\"}"), 0);
  EXPECT_EQ(h.metric("salttap_spool_backpressure_waits_total"), 1);
}

TEST(IndexerService, TheBackfillLaneHasSpoolMetricsOfItsOwnWhichMoveAsItShips) {
  IndexerConfig config = Harness::base_config();
  config.backfill_lane = true;
  Harness h(config);
  IndexerService& service = h.make();
  std::vector<BulkDoc> cache;
  for (int i = 10; i < 13; ++i) cache.push_back(job_doc(i));
  service.spool(
      cache, [] { return false; }, Lane::backfill);
  service.spool(std::vector<BulkDoc>{job_doc(1)}, [] { return false; });
  EXPECT_EQ(h.metric("salttap_spool_backfill_appended_documents_total"), 3);
  EXPECT_EQ(h.metric("salttap_spool_backfill_appended_bytes_total"), 3 * static_cast<double>(record_bytes()));
  EXPECT_EQ(h.metric("salttap_spool_backfill_pending_documents"), 3);
  EXPECT_EQ(h.metric("salttap_spool_backfill_size_bytes"), 3 * static_cast<double>(record_bytes()));
  EXPECT_EQ(h.metric("salttap_spool_backfill_segments"), 3) << "one document per segment";
  EXPECT_EQ(h.metric("salttap_spool_backfill_acked_documents_total"), 0);
  // The live lane's families are the live lane's alone, as before there was a backfill lane.
  EXPECT_EQ(h.metric("salttap_spool_appended_documents_total"), 1);
  EXPECT_EQ(h.metric("salttap_spool_pending_documents"), 1);

  h.engine.up = true;
  service.start();
  h.time.advance_until([&] { return service.pending() == 0; });
  EXPECT_EQ(h.metric("salttap_spool_backfill_acked_documents_total"), 3);
  EXPECT_EQ(h.metric("salttap_spool_backfill_pending_documents"), 0);
  EXPECT_EQ(h.metric("salttap_spool_acked_documents_total"), 1);
  EXPECT_EQ(h.metric("salttap_spool_backfill_full"), 0);
  service.stop(0ms);
}

TEST(IndexerService, AFullBackfillLaneCountsAndLogsItsDropsAsTheBackfillLanes) {
  IndexerConfig config = Harness::base_config();
  config.backfill_lane = true;
  config.spool.max_bytes = 16 * record_bytes();  // the backfill lane gets a quarter: four documents
  config.backpressure_wait = 1s;
  Harness h(config);
  IndexerService& service = h.make();  // never started: nothing leaves the spool
  ::testing::internal::CaptureStderr();
  // Three jobs take the backfill lane past its events share (80% of four documents).
  service.spool(
      std::vector<BulkDoc>{job_doc(1), job_doc(2), job_doc(3)}, [] { return false; }, Lane::backfill);
  BulkDoc event = job_doc(4);
  event.cls = DocClass::event;
  service.spool(
      std::vector<BulkDoc>{event}, [] { return false; }, Lane::backfill);
  EXPECT_EQ(h.metric("salttap_spool_backfill_dropped_documents_total{class=\"event\",reason=\"full\"}"), 1);
  EXPECT_EQ(h.metric("salttap_spool_backfill_full"), 1);
  EXPECT_EQ(h.metric("salttap_spool_dropped_documents_total{class=\"event\",reason=\"full\"}"), 0)
      << "not the live lane's";
  EXPECT_EQ(h.metric("salttap_spool_full"), 0);
  EXPECT_EQ(service.backfill_spool()->stats().full_episodes, 1u);

  // The fourth job fits; the fifth and sixth wait for room, then are given up at stop.
  auto spooled = std::async(std::launch::async, [&] {
    service.spool(
        std::vector<BulkDoc>{job_doc(5), job_doc(6), job_doc(7)}, [] { return true; }, Lane::backfill);
  });
  h.time.await_waiters(1);  // the back-pressure wait
  h.time.advance_to_next_deadline();
  spooled.get();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find((h.dir.path() / "spool" / "backfill").string() + ": full ("), std::string::npos)
      << "the spool's WARN names the lane's directory\n"
      << log;
  EXPECT_NE(log.find("indexer: backfill spool full"), std::string::npos) << log;
  EXPECT_NE(log.find("indexer: stopping with a full backfill spool: 2 job/return/alert documents not spooled"),
            std::string::npos)
      << log;
  EXPECT_EQ(h.metric("salttap_spool_backfill_dropped_documents_total{class=\"job\",reason=\"stopped_while_full\"}"), 2);
  EXPECT_EQ(h.metric("salttap_spool_backfill_backpressure_waits_total"), 1);
  EXPECT_GE(h.metric("salttap_spool_backfill_backpressure_timeouts_total{class=\"job\"}"), 1);
  EXPECT_EQ(h.metric("salttap_spool_dropped_documents_total{class=\"job\",reason=\"stopped_while_full\"}"), 0);
  EXPECT_EQ(h.metric("salttap_spool_backpressure_waits_total"), 0);
  EXPECT_EQ(service.pending(Lane::backfill), 4u);
  EXPECT_EQ(service.pending(Lane::live), 0u);
}

}  // namespace
}  // namespace salttap::indexer
