// The bulk shipper against an in-memory RecordSource and a scripted
// HttpClient: what is resent, acked, split, dead-lettered, and when. Batch
// windows, backoff sleeps and drain deadlines run on fake time: a test moves
// time only once the worker threads are blocked waiting, so no outcome depends
// on how fast the machine is.

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>

#include <fmt/format.h>

#include "indexer/bulk_shipper.h"
#include "indexer/internal/dead_letter.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/gunzip.h"
#include "tests/support/memory_record_source.h"
#include "tests/support/temp_dir.h"

namespace salttap::indexer {
namespace {

using namespace std::chrono_literals;
using salttap::testing::FakeSteadyTime;
using salttap::testing::TempDir;

// ---- fakes -------------------------------------------------------------------

using FakeSource = salttap::testing::MemoryRecordSource;

// The documents of a bulk body ("<action>\n<source>\n" each).
std::vector<std::string> docs_in(const std::string& body) {
  std::vector<std::string> docs;
  std::size_t at = 0;
  while (at < body.size()) {
    const auto first = body.find('\n', at);
    const auto second = body.find('\n', first + 1);
    docs.push_back(body.substr(at, second + 1 - at));
    at = second + 1;
  }
  return docs;
}

// {"errors":..,"items":[{"create":{"status":S[,"error":{...}]}}, ...]}
std::string bulk_response(const std::vector<int>& statuses) {
  std::string items;
  bool errors = false;
  for (int s : statuses) {
    if (!items.empty()) items += ",";
    std::string error;
    if (s == 429)
      error = R"(,"error":{"type":"es_rejected_execution_exception","reason":"queue full"})";
    else if (s >= 500)
      error = R"(,"error":{"type":"unavailable_shards_exception","reason":"primary shard is not active"})";
    else if (s == 409)
      error = R"(,"error":{"type":"version_conflict_engine_exception","reason":"document already exists"})";
    else if (s >= 400)
      error = R"(,"error":{"type":"mapper_parsing_exception","reason":"failed to parse field [n] of type [long]",)"
              R"("caused_by":{"type":"illegal_argument_exception","reason":"For input string: \"x\""}})";
    errors |= s >= 300;
    items += fmt::format(R"({{"create":{{"status":{}{}}}}})", s, error);
  }
  return fmt::format(R"({{"errors":{},"items":[{}]}})", errors ? "true" : "false", items);
}

http::HttpResponse ok(const std::vector<int>& statuses) {
  return {200, bulk_response(statuses), {}, "http://fake", {}, 0};
}
http::HttpResponse status(long s, std::string body = {}) {
  return {s, std::move(body), s ? "" : "connection refused", "http://fake", {}, 0};
}

// Answers scripted responses first, then `respond` (default: every item 201).
struct Script {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<http::HttpRequest> requests;
  FakeSteadyTime* time = nullptr;
  std::vector<SteadyTime::time_point> times;  // when each request was sent, on `time`
  SteadyTime::duration latency{};             // how much `time` moves while a request is answered
  std::deque<http::HttpResponse> queued;
  std::function<http::HttpResponse(const http::HttpRequest&)> respond = [](const http::HttpRequest& r) {
    return ok(std::vector<int>(docs_in(r.body).size(), 201));
  };

  std::vector<http::HttpRequest> sent() {
    std::lock_guard lock(mutex);
    return requests;
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return requests.size();
  }
  std::vector<SteadyTime::time_point> sent_at() {
    std::lock_guard lock(mutex);
    return times;
  }
};

class ScriptedClient final : public http::HttpClient {
 public:
  explicit ScriptedClient(std::shared_ptr<Script> s) : script_(std::move(s)) {}
  http::HttpResponse send(const http::HttpRequest& sent) override {
    const http::HttpRequest request = salttap::testing::as_received(sent);
    std::unique_lock lock(script_->mutex);
    script_->requests.push_back(request);
    script_->times.push_back(script_->time->now());
    script_->time->advance(script_->latency);
    http::HttpResponse r;
    if (!script_->queued.empty()) {
      r = std::move(script_->queued.front());
      script_->queued.pop_front();
    } else {
      auto respond = script_->respond;
      lock.unlock();
      r = respond(request);
      lock.lock();
    }
    r.bytes_sent = r.status ? request.body.size() : 0;
    script_->cv.notify_all();
    return r;
  }

 private:
  std::shared_ptr<Script> script_;
};

std::string doc(int i, std::string_view source = {}) {
  return fmt::format(R"({{"create":{{"_index":"salt-events-2026.11.29","_id":"m1/{}"}}}})"
                     "\n{}\n",
                     i, source.empty() ? fmt::format(R"({{"n":{}}})", i) : std::string(source));
}

// One worker, a 1 s batch window, backoff 1 s doubling to 4 s with the
// jitter pinned at its middle (0.5 s, 1 s, 2 s, 2 s...).
ShipperConfig test_config() {
  ShipperConfig c;
  c.in_flight = 1;
  c.batch.max_wait = 1s;
  c.backoff = {1s, 4s};
  c.unit_random = [] { return 0.5; };
  return c;
}

// True once `f` is ready; a future that is not ready within a minute of real
// time means the thread behind it waits for a time that never comes.
bool finishes(std::future<void>& f) { return f.wait_for(60s) == std::future_status::ready; }

struct Harness {
  explicit Harness(ShipperConfig c = test_config(), std::filesystem::path dead_dir = {})
      : config(std::move(c)), source(std::move(dead_dir), time), script(std::make_shared<Script>()) {
    config.steady_time = &time;
    script->time = &time;
  }
  ~Harness() { stop(); }
  void start() {
    shipper =
        std::make_unique<BulkShipper>(config, source, [s = script] { return std::make_unique<ScriptedClient>(s); });
    shipper->start();
  }
  // Lets time run (batch windows close, backoff sleeps end) until `done` holds:
  // time moves while the preparer and every worker wait.
  void run_until(const std::function<bool()>& done) { time.advance_until(done, config.in_flight + 1); }
  void run_until_acked(std::size_t n) {
    run_until([&] { return source.acked() >= n; });
  }
  // stop(0): a worker waiting in take() is woken, one in a request is
  // aborted; only one sleeping in its backoff needs time to pass.
  void stop() {
    if (!shipper) return;
    auto stopped = std::async(std::launch::async, [this] { shipper->stop(0ms); });
    time.advance_until([&] { return stopped.wait_for(0s) == std::future_status::ready; });
  }
  FakeSteadyTime time;
  ShipperConfig config;
  FakeSource source;
  std::shared_ptr<Script> script;
  std::unique_ptr<BulkShipper> shipper;
};

rapidjson::Document parse(std::string_view line) {
  rapidjson::Document d;
  d.Parse(line.data(), line.size());
  EXPECT_FALSE(d.HasParseError()) << line;
  return d;
}

// ---- per-item and whole-request outcomes -------------------------------------

TEST(BulkShipper, MixedBatchResendsOnlyTheFailedItemsAndCounts409AsDelivered) {
  Harness h;
  for (int i = 0; i < 4; ++i) h.source.add(doc(i));
  h.script->queued.push_back(ok({201, 429, 409, 503}));
  h.start();
  h.run_until_acked(4);
  h.stop();
  const auto sent = h.script->sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(docs_in(sent[0].body), (std::vector{doc(0), doc(1), doc(2), doc(3)}));
  EXPECT_EQ(docs_in(sent[1].body), (std::vector{doc(1), doc(3)}));
  const auto s = h.shipper->stats();
  EXPECT_EQ(s.docs_shipped, 4u);
  EXPECT_EQ(s.docs_conflict, 1u);
  EXPECT_EQ(s.docs_retried, 2u);
  EXPECT_EQ(s.requests, 2u);
  EXPECT_EQ(s.request_failures, 0u) << "item failures are not request failures";
}

TEST(BulkShipper, RequestIsANdjsonBulkWithFilterPathAndGzip) {
  auto config = test_config();
  config.refresh_wait_for = true;
  Harness h(config);
  h.source.add(doc(1));
  h.start();
  h.run_until_acked(1);
  const auto r = h.script->sent().at(0);
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/_bulk?filter_path=errors,items.*.status,items.*.error&refresh=wait_for");
  EXPECT_EQ(r.content_type, "application/x-ndjson");
  EXPECT_TRUE(r.gzip);
  EXPECT_EQ(r.body, doc(1));
  EXPECT_EQ(h.shipper->stats().bytes_sent, doc(1).size());
}

TEST(BulkShipper, AllItems429ThenSuccess) {
  Harness h;
  for (int i = 0; i < 3; ++i) h.source.add(doc(i));
  h.script->queued.push_back(ok({429, 429, 429}));
  h.start();
  h.run_until_acked(3);
  const auto sent = h.script->sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].body, sent[0].body);
  EXPECT_EQ(h.shipper->stats().docs_retried, 3u);
  EXPECT_EQ(h.shipper->stats().docs_shipped, 3u);
}

TEST(BulkShipper, WholeRequest503ThenSuccess) {
  Harness h;
  for (int i = 0; i < 3; ++i) h.source.add(doc(i));
  h.script->queued.push_back(status(503, "<html>Service Unavailable</html>"));
  h.start();
  h.run_until_acked(3);
  const auto sent = h.script->sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].body, sent[0].body);
  const auto s = h.shipper->stats();
  EXPECT_EQ(s.request_failures, 1u);
  EXPECT_EQ(s.failures[static_cast<std::size_t>(RequestFailure::http_5xx)], 1u);
  EXPECT_EQ(s.docs_shipped, 3u);
}

TEST(BulkShipper, NoResponseIsRetriedAndTrackedAsUnreachable) {
  Harness h;
  h.source.add(doc(1));
  h.script->queued.push_back(status(0));
  h.script->queued.push_back(status(0));
  h.start();
  h.run_until_acked(1);
  EXPECT_EQ(h.script->sent().size(), 3u);
  EXPECT_EQ(h.shipper->stats().failures[static_cast<std::size_t>(RequestFailure::transport)], 2u);
  EXPECT_TRUE(h.shipper->engine_reachable());
}

TEST(BulkShipper, TruncatedResponseBodyRetriesTheWholeBatch) {
  Harness h;
  for (int i = 0; i < 2; ++i) h.source.add(doc(i));
  h.script->queued.push_back(status(200, R"({"errors":false,"items":[{"create":{"status":201}})"));
  h.start();
  h.run_until_acked(2);
  const auto sent = h.script->sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].body, sent[0].body);
  EXPECT_EQ(h.shipper->stats().failures[static_cast<std::size_t>(RequestFailure::bad_response)], 1u);
}

TEST(BulkShipper, TooLargeSplitsTheBatchInHalves) {
  Harness h;
  for (int i = 0; i < 4; ++i) h.source.add(doc(i));
  h.script->queued.push_back(status(413));
  h.start();
  h.run_until_acked(4);
  const auto sent = h.script->sent();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(docs_in(sent[1].body), (std::vector{doc(0), doc(1)}));
  EXPECT_EQ(docs_in(sent[2].body), (std::vector{doc(2), doc(3)}));
  EXPECT_EQ(h.shipper->stats().failures[static_cast<std::size_t>(RequestFailure::http_413)], 1u);
}

TEST(BulkShipper, WholeRequest400IsolatesTheMalformedDocumentByHalving) {
  Harness h;
  for (int i = 0; i < 4; ++i) h.source.add(i == 1 ? doc(i, R"({"n":BROKEN)") : doc(i));
  h.script->respond = [](const http::HttpRequest& r) {
    if (r.body.find("deadletter") == std::string::npos && r.body.find("BROKEN") != std::string::npos)
      return status(400,
                    R"({"error":{"type":"x_content_parse_exception","reason":"unexpected character"},"status":400})");
    return ok(std::vector<int>(docs_in(r.body).size(), 201));
  };
  h.start();
  h.run_until_acked(4);
  const auto sent = h.script->sent();
  // [0 1 2 3] 400 -> [0 1] 400 -> [0] ok, [1] 400 -> its dead letter, [2 3] ok
  ASSERT_EQ(sent.size(), 6u);
  EXPECT_EQ(docs_in(sent[2].body), (std::vector{doc(0)}));
  EXPECT_EQ(docs_in(sent[3].body), (std::vector{doc(1, R"({"n":BROKEN)")}));
  EXPECT_NE(sent[4].body.find("salt-deadletter-"), std::string::npos);
  EXPECT_EQ(docs_in(sent[5].body), (std::vector{doc(2), doc(3)}));
  const auto s = h.shipper->stats();
  EXPECT_EQ(s.docs_shipped, 3u);
  EXPECT_EQ(s.docs_dead_lettered, 1u);
}

// ---- dead letters ---------------------------------------------------------------

constexpr Micros kNov29 = 1'795'946'400'000'000;  // 2026-11-29T10:00:00Z

TEST(BulkShipper, MappingRejectionBecomesADeadLetterDocument) {
  ManualClock clock(kNov29);
  auto config = test_config();
  config.clock = &clock;
  config.dead_letter_prefix = "ops";
  Harness h(config);
  h.source.add(doc(7, R"({"n":"not a number","minion":"web1"})"));
  h.source.add(doc(8));
  h.script->queued.push_back(ok({400, 201}));
  h.start();
  h.run_until_acked(2);
  const auto sent = h.script->sent();
  ASSERT_EQ(sent.size(), 2u);
  const auto dead = docs_in(sent[1].body);
  ASSERT_EQ(dead.size(), 1u);
  const auto eol = dead[0].find('\n');
  const auto action = parse(dead[0].substr(0, eol));
  ASSERT_TRUE(action.HasMember("index")) << "dead letters use op index";
  EXPECT_STREQ(action["index"]["_index"].GetString(), "ops-deadletter-2026.11.29");
  EXPECT_STREQ(action["index"]["_id"].GetString(), "salt-events-2026.11.29/m1/7");
  const auto source = parse(std::string_view(dead[0]).substr(eol + 1));
  EXPECT_STREQ(source["@timestamp"].GetString(), "2026-11-29T10:00:00.000000Z");
  EXPECT_STREQ(source["index"].GetString(), "salt-events-2026.11.29");
  EXPECT_STREQ(source["doc_id"].GetString(), "m1/7");
  EXPECT_EQ(source["status"].GetInt(), 400);
  EXPECT_STREQ(source["error_type"].GetString(), "mapper_parsing_exception");
  EXPECT_STREQ(source["reason"].GetString(),
               "mapper_parsing_exception: failed to parse field [n] of type [long] "
               "(caused by illegal_argument_exception: For input string: \"x\")");
  ASSERT_TRUE(source["document"].IsString()) << "the original document is kept as text";
  EXPECT_STREQ(source["document"].GetString(), R"({"n":"not a number","minion":"web1"})");
  EXPECT_EQ(source.MemberCount(), 7u);
  const auto s = h.shipper->stats();
  EXPECT_EQ(s.docs_shipped, 1u);
  EXPECT_EQ(s.docs_dead_lettered, 1u);
  EXPECT_EQ(s.docs_dead_letter_file, 0u);
}

TEST(BulkShipper, DeadLetterIndexRefusingWritesTheLocalFileThenAcks) {
  TempDir tmp;
  ManualClock clock(kNov29);
  auto config = test_config();
  config.clock = &clock;
  Harness h(config, tmp.path() / "dead");
  h.source.add(doc(7, R"({"n":"not a number"})"));
  h.script->queued.push_back(ok({400}));
  h.script->queued.push_back(http::HttpResponse{
      200,
      R"({"errors":true,"items":[{"index":{"status":400,"error":{"type":"strict_dynamic_mapping_exception","reason":"mapping set to strict"}}}]})",
      {},
      "http://fake",
      {},
      0});
  h.start();
  h.run_until_acked(1);
  std::ifstream in(tmp.path() / "dead" / "deadletter-2026.11.29.ndjson");
  std::string line, extra;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_FALSE(std::getline(in, extra)) << "one line per dead letter";
  const auto d = parse(line);
  EXPECT_STREQ(d["index"].GetString(), "salt-events-2026.11.29");
  EXPECT_STREQ(d["doc_id"].GetString(), "m1/7");
  EXPECT_EQ(d["status"].GetInt(), 400);
  EXPECT_STREQ(d["error_type"].GetString(), "mapper_parsing_exception");
  EXPECT_STREQ(d["document"].GetString(), R"({"n":"not a number"})");
  EXPECT_STREQ(d["refused"].GetString(), "strict_dynamic_mapping_exception: mapping set to strict");
  const auto s = h.shipper->stats();
  EXPECT_EQ(s.docs_dead_letter_file, 1u);
  EXPECT_EQ(s.docs_dead_lettered, 0u);
  EXPECT_EQ(h.script->sent().size(), 2u);
}

TEST(BulkShipper, UnwritableDeadLetterFileKeepsTheRecordUnacked) {
  TempDir tmp;
  std::ofstream(tmp.path() / "not-a-dir") << "x";
  auto config = test_config();
  Harness h(config, tmp.path() / "not-a-dir" / "dead");
  h.source.add(doc(1));
  h.script->respond = [](const http::HttpRequest& r) { return ok(std::vector<int>(docs_in(r.body).size(), 400)); };
  h.start();
  h.run_until([&] { return h.script->count() >= 4; });
  h.stop();
  EXPECT_EQ(h.source.acked(), 0u);
  EXPECT_GE(h.shipper->stats().dead_letter_file_errors, 1u);
}

TEST(BulkShipper, ADocumentTooLargeEvenAloneIsDeadLetteredThenFiled) {
  TempDir tmp;
  Harness h(test_config(), tmp.path());
  h.source.add(doc(1));
  h.script->respond = [](const http::HttpRequest&) { return status(413); };
  h.start();
  h.run_until_acked(1);
  EXPECT_EQ(h.shipper->stats().docs_dead_letter_file, 1u);
  EXPECT_EQ(h.script->sent().size(), 2u);
}

// ---- engine down, stop --------------------------------------------------------------

TEST(BulkShipper, WhileTheEngineIsDownEachWorkerHoldsOneBatch) {
  auto config = test_config();
  config.in_flight = 2;
  config.batch.max_docs = 5;
  Harness h(config);
  for (int i = 0; i < 30; ++i) h.source.add(doc(i));
  h.script->respond = [](const http::HttpRequest&) { return status(0); };
  h.start();
  h.run_until([&] { return h.script->count() >= 20; });  // both workers retrying through their backoffs
  EXPECT_EQ(h.source.handed_out(), 15u)
      << "no more records taken while the batches are not delivered: one per worker, one prepared";
  for (const auto& r : h.script->sent()) EXPECT_EQ(docs_in(r.body).size(), 5u);
  EXPECT_EQ(h.shipper->stats().in_flight_batches, 2u);
  EXPECT_FALSE(h.shipper->engine_reachable());
  h.stop();
  EXPECT_EQ(h.source.acked(), 0u);
  EXPECT_EQ(h.shipper->stats().in_flight_batches, 0u);
}

TEST(BulkShipper, StopWakesAWorkerWaitingForRecordsAtOnce) {
  ShipperConfig config = test_config();
  config.in_flight = 1;
  Harness h(config);
  h.start();
  h.time.await_waiters(1);  // the worker waits in take(): nothing to ship
  const auto before = h.time.now();
  auto stopped = std::async(std::launch::async, [&] { h.shipper->stop(0ms); });
  ASSERT_TRUE(finishes(stopped)) << "stop() waited for the worker's take() to time out";
  EXPECT_EQ(h.time.now(), before) << "no time had to pass";
  h.shipper.reset();
}

TEST(BulkShipper, StopDuringBackoffReturnsAtTheDrainDeadline) {
  auto config = test_config();
  config.backoff = {30s, 30s};  // 15 s with the pinned jitter
  Harness h(config);
  h.source.add(doc(1));
  h.script->respond = [](const http::HttpRequest&) { return status(503); };
  h.start();
  h.run_until([&] { return h.script->count() >= 1; });
  h.time.await_waiters(2);  // the worker sleeps in its backoff, the preparer waits for records
  const auto before = h.time.now();
  auto stopped = std::async(std::launch::async, [&] { h.shipper->stop(200ms); });
  // Time moves only once stop() has begun (it wakes the preparer's take):
  // before that, the preparer's take slices would let it run on towards the
  // backoff's end on a machine slow to start stop()'s thread.
  ASSERT_TRUE(h.source.wait_woken(1)) << "stop() began";
  // The preparer exits (after at most one more take slice, had it missed the
  // wake); the worker sleeps on and stop() waits for the drain. Time moves
  // only while two of them wait: never while the woken preparer is on its
  // way out and the backoff is the only deadline left.
  h.time.advance_until([&] { return stopped.wait_for(0s) == std::future_status::ready; }, 2);
  ASSERT_TRUE(finishes(stopped)) << "stop() waits out the backoff";
  // The drain deadline: 200 ms after stop() began (the preparer's 100 ms
  // take slices may pass before it sees the stop), far before the backoff's 15 s.
  EXPECT_GE(h.time.now() - before, 200ms);
  EXPECT_LT(h.time.now() - before, 14s) << "stop() returns at the drain deadline, not when the backoff ends";
  EXPECT_EQ(h.script->count(), 1u) << "no retry once stopped";
  EXPECT_EQ(h.source.acked(), 0u) << "undelivered records stay in the spool";
  EXPECT_EQ(h.shipper->stats().in_flight_batches, 0u);
}

TEST(BulkShipper, StopWithDrainShipsThePartialBatchAtOnce) {
  auto config = test_config();
  config.batch.max_wait = 30s;
  config.batch.ship_when_idle = false;  // the batch waits for its window until stop()
  Harness h(config);
  h.source.add(doc(1));
  h.source.add(doc(2));
  h.start();
  ASSERT_TRUE(h.source.wait_handed_out(2));
  const auto before = h.time.now();
  auto stopped = std::async(std::launch::async, [&] { h.shipper->stop(5s); });
  // No time has to pass: stop() wakes the preparer, which hands the batch on.
  ASSERT_TRUE(h.source.wait_acked(2)) << "shipped at stop";
  ASSERT_TRUE(finishes(stopped));
  EXPECT_EQ(h.source.acked(), 2u);
  EXPECT_EQ(h.script->count(), 1u);
  EXPECT_LT(h.time.now() - before, 1s) << "shipped at stop, not after its 30 s window nor at the 5 s drain deadline";
}

// ---- batching --------------------------------------------------------------------

std::vector<std::size_t> batch_sizes(const std::vector<http::HttpRequest>& sent) {
  std::vector<std::size_t> sizes;
  for (const auto& r : sent) sizes.push_back(docs_in(r.body).size());
  return sizes;
}

// The requests that ship `n` documents under `config`, every one accepted.
std::vector<http::HttpRequest> shipped(const ShipperConfig& config, int n) {
  Harness h(config);
  for (int i = 0; i < n; ++i) h.source.add(doc(i));
  h.start();
  h.run_until_acked(n);
  return h.script->sent();
}

TEST(BulkShipper, BatchesByCount) {
  auto config = test_config();
  config.batch.max_docs = 3;
  EXPECT_EQ(batch_sizes(shipped(config, 7)), (std::vector<std::size_t>{3, 3, 1}));
}

TEST(BulkShipper, BatchesByBytes) {
  auto config = test_config();
  const std::size_t each = doc(0).size();
  config.batch.max_bytes = each * 2 + each / 2;
  const auto sent = shipped(config, 5);
  EXPECT_EQ(batch_sizes(sent), (std::vector<std::size_t>{2, 2, 1}));
  for (const auto& r : sent) EXPECT_LE(r.body.size(), config.batch.max_bytes);
}

TEST(BulkShipper, ARecordLargerThanMaxBytesGoesAlone) {
  auto config = test_config();
  config.batch.max_bytes = 10;
  EXPECT_EQ(batch_sizes(shipped(config, 3)), (std::vector<std::size_t>{1, 1, 1}));
}

TEST(BulkShipper, APartialBatchGoesAtOnceWhenAWorkerIsFree) {
  auto config = test_config();
  config.batch.max_wait = 300ms;
  Harness h(config);
  const auto t0 = h.time.now();
  h.start();
  h.time.await_waiters(2);  // the worker waits for a batch, the preparer for records
  h.source.add(doc(1));
  ASSERT_TRUE(h.source.wait_acked(1)) << "shipped and acknowledged without any time passing";
  ASSERT_EQ(h.script->count(), 1u);
  EXPECT_EQ(h.script->sent_at().at(0), t0) << "not after the 300 ms window: the worker was free";
  // While the only worker is busy (its request failed: it sleeps in its backoff),
  // records wait for company up to max_wait, and then for the worker.
  h.script->queued.push_back(status(503));
  h.source.add(doc(2));
  h.run_until([&] { return h.script->count() >= 2; });
  h.source.add(doc(3));
  h.source.add(doc(4));
  h.run_until_acked(4);
  const auto sent = h.script->sent();
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(docs_in(sent[3].body), (std::vector{doc(3), doc(4)})) << "one batch, gathered while the worker was busy";
}

TEST(BulkShipper, APartialBatchGoesAfterMaxWait) {
  auto config = test_config();
  config.batch.max_wait = 300ms;
  config.batch.ship_when_idle = false;  // the window alone
  Harness h(config);
  h.source.add(doc(1));
  const auto t0 = h.time.now();
  h.start();
  ASSERT_TRUE(h.source.wait_handed_out(1));
  h.source.add(doc(2));  // joins the batch still waiting
  h.run_until_acked(2);
  const auto sent = h.script->sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(docs_in(sent[0].body).size(), 2u);
  EXPECT_EQ(h.script->sent_at().at(0) - t0, 300ms) << "the window opens with the first record";
}

// ---- backoff, metrics ---------------------------------------------------------------

// The gaps between a request and its retry, on fake time.
std::vector<SteadyTime::duration> gaps(const std::vector<SteadyTime::time_point>& times) {
  std::vector<SteadyTime::duration> out;
  for (std::size_t i = 1; i < times.size(); ++i) out.push_back(times[i] - times[i - 1]);
  return out;
}

TEST(BulkShipper, RetriesBackOffWithFullJitterUpToTheCap) {
  auto config = test_config();
  config.unit_random = [] { return 0.999999; };  // the top of each jitter range
  Harness h(config);
  h.source.add(doc(1));
  for (int i = 0; i < 4; ++i) h.script->queued.push_back(status(503));
  h.start();
  h.run_until_acked(1);
  EXPECT_EQ(gaps(h.script->sent_at()), (std::vector<SteadyTime::duration>{1s, 2s, 4s, 4s}));
}

TEST(BulkShipper, ARoundWithoutRetriesRestartsTheBackoff) {
  auto config = test_config();
  config.unit_random = [] { return 0.999999; };
  Harness h(config);
  h.source.add(doc(1));
  h.source.add(doc(2));
  h.script->queued.push_back(ok({429, 201}));  // doc 1 retried after 1 s
  h.script->queued.push_back(ok({400}));       // then rejected: its dead letter goes at once
  h.script->queued.push_back(status(503));     // the dead letter retried after 1 s again, not 2 s
  h.start();
  h.run_until_acked(2);
  EXPECT_EQ(gaps(h.script->sent_at()), (std::vector<SteadyTime::duration>{1s, 0s, 1s}));
  EXPECT_EQ(h.shipper->stats().docs_dead_lettered, 1u);
}

TEST(BulkShipper, PublishesIndexerMetrics) {
  Harness h;
  h.source.add(doc(1));
  h.script->queued.push_back(status(429));
  h.script->latency = 250ms;
  h.start();
  h.run_until_acked(1);
  h.stop();  // the worker has put its batch down
  Metrics m;
  h.shipper->publish(m);
  const std::string text = m.render();
  for (const char* sample : {
           "salttap_indexer_bulk_requests_total 2\n",
           "salttap_indexer_bulk_request_failures_total{reason=\"http_429\"} 1\n",
           "salttap_indexer_bulk_request_failures_total{reason=\"transport\"} 0\n",
           "salttap_indexer_documents_shipped_total 1\n",
           "salttap_indexer_document_retries_total 1\n",
           "salttap_indexer_documents_dead_lettered_total{destination=\"index\"} 0\n",
           "salttap_indexer_documents_dead_lettered_total{destination=\"file\"} 0\n",
           "# TYPE salttap_indexer_bulk_request_duration_seconds summary\n",
           "salttap_indexer_bulk_request_duration_seconds_count 2\n",
           "salttap_indexer_bulk_request_duration_seconds_sum 0.5\n",
           "salttap_indexer_bulk_request_last_duration_seconds 0.25\n",
           "salttap_indexer_engine_reachable 1\n",
           "salttap_indexer_in_flight_batches 0\n",
       })
    EXPECT_NE(text.find(sample), std::string::npos) << sample << "\n" << text;
  EXPECT_NE(text.find("salttap_indexer_bulk_request_bytes_total "), std::string::npos);
}

// ---- dead-letter rendering ------------------------------------------------------------

TEST(DeadLetter, MalformedActionLineKeepsTheWholePayloadAndNoId) {
  const ItemResult r{ItemOutcome::reject, 400, "HTTP 400: x_content_parse_exception", "x_content_parse_exception"};
  const auto d = make_dead_letter("{not json\n", r, kNov29);
  EXPECT_EQ(d.index, "");
  EXPECT_EQ(d.doc_id, "");
  EXPECT_EQ(d.document, "{not json\n");
  const std::string nd = dead_letter_ndjson(d, "salt-deadletter-2026.11.29");
  EXPECT_EQ(nd.substr(0, nd.find('\n')), R"({"index":{"_index":"salt-deadletter-2026.11.29"}})");
  EXPECT_EQ(dead_letter_file_name(kNov29), "deadletter-2026.11.29.ndjson");
}

TEST(DeadLetter, LongIdsAreHashedAndInvalidUtf8IsReplaced) {
  const std::string long_id(300, 'x');
  const ItemResult r{ItemOutcome::reject, 400, "bad \xff byte", "t"};
  const auto d = make_dead_letter(R"({"create":{"_index":"i","_id":")" + long_id + "\"}}\n{}\n", r, kNov29);
  EXPECT_EQ(d.doc_id, long_id);
  const std::string nd = dead_letter_ndjson(d, "dl");
  const auto action = parse(nd.substr(0, nd.find('\n')));
  const std::string id = action["index"]["_id"].GetString();
  EXPECT_EQ(id.substr(0, 3), "i/~");
  EXPECT_LT(id.size(), 64u);
  const auto source = parse(nd.substr(nd.find('\n') + 1));
  EXPECT_STREQ(source["reason"].GetString(), "bad \xef\xbf\xbd byte");
}

}  // namespace
}  // namespace salttap::indexer
