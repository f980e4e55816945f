// The bulk shipper and the libcurl client against a real engine.
// Run by tests/engines/test_shipper_engines.py, which starts OpenSearch 2.19
// and Elasticsearch 7.17 and sets SALTTAP_ENGINE_URL; skipped without it.
// Lines starting with "[figures]" are read by the pytest for its report.

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "http/curl_http_client.h"
#include "indexer/bulk_shipper.h"
#include "indexer/index_layout.h"
#include "indexer/internal/dead_letter.h"
#include "tests/support/loopback_port.h"
#include "tests/support/memory_record_source.h"

namespace salttap::indexer {
namespace {

using namespace std::chrono_literals;
using salttap::testing::MemoryRecordSource;
using Steady = std::chrono::steady_clock;

std::string engine_url() {
  const char* url = std::getenv("SALTTAP_ENGINE_URL");
  return url ? url : "";
}

// One tag per run: index names never collide with an earlier run's.
const std::string& run_tag() {
  static const std::string tag = fmt::format("{}", Steady::now().time_since_epoch().count() % 1'000'000'000);
  return tag;
}
std::string index_name(std::string_view what) { return fmt::format("salttap-shiptest-{}-{}", run_tag(), what); }

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = engine_url();
    ASSERT_FALSE(url_.empty()) << "SALTTAP_ENGINE_URL is not set (tests/engines/test_shipper_engines.py sets it)";
    http::HttpClientConfig config;
    config.hosts = {url_};
    admin_ = http::make_curl_client(config);
  }

  // (status, parsed body) of an admin call.
  std::pair<long, rapidjson::Document> call(const std::string& method, const std::string& path,
                                            const std::string& body = {}) {
    const http::HttpResponse r = admin_->send({method, path, body, "application/json", false, {}});
    rapidjson::Document d;
    d.Parse(r.body.data(), r.body.size());
    EXPECT_NE(r.status, 0) << method << " " << path << ": " << r.error;
    return {r.status, std::move(d)};
  }
  long count(const std::string& index) {
    EXPECT_EQ(call("POST", "/" + index + "/_refresh").first, 200);
    auto [status, body] = call("GET", "/" + index + "/_count");
    EXPECT_EQ(status, 200);
    return body.IsObject() && body.HasMember("count") ? body["count"].GetInt64() : -1;
  }
  void create_index(const std::string& index, const std::string& mappings) {
    const auto [status, body] =
        call("PUT", "/" + index,
             R"({"settings":{"number_of_shards":1,"number_of_replicas":0},"mappings":)" + mappings + "}");
    ASSERT_EQ(status, 200);
  }

  struct Run {
    ShipperStats stats;
    bool reachable = false;
    double seconds = 0;
  };
  // Ships every record of `source` and waits until all are acked.
  Run ship(MemoryRecordSource& source, std::size_t n, ShipperConfig config, std::vector<std::string> hosts = {}) {
    http::HttpClientConfig client;
    client.hosts = hosts.empty() ? std::vector<std::string>{url_} : std::move(hosts);
    BulkShipper shipper(config, source, [client] { return http::make_curl_client(client); });
    const auto t0 = Steady::now();
    shipper.start();
    EXPECT_TRUE(source.wait_acked(n, 120s)) << source.acked() << " of " << n << " acked";
    const double seconds = std::chrono::duration<double>(Steady::now() - t0).count();
    shipper.stop(5s);
    return {shipper.stats(), shipper.engine_reachable(), seconds};
  }

  std::string url_;
  std::unique_ptr<http::HttpClient> admin_;
};

std::string doc(const std::string& index, int i) {
  return fmt::format(R"({{"create":{{"_index":"{}","_id":"doc-{}"}}}})"
                     "\n"
                     R"({{"@timestamp":"2026-11-29T12:00:00.000000Z","n":{},"minion":"minion-{}","fun":"state.apply"}})"
                     "\n",
                     index, i, i, i % 50);
}

ShipperConfig shipper_config() {
  ShipperConfig c;
  c.in_flight = 2;
  c.batch.max_docs = 250;
  c.batch.max_wait = 50ms;
  c.backoff.initial = 50ms;
  c.backoff.max = 500ms;
  c.dead_letter_prefix = index_name("dl");
  return c;
}

TEST_F(EngineTest, ReportsItsProductHeader) {
  const http::HttpResponse r = admin_->send({"GET", "/", "", "application/json", false, {}});
  ASSERT_EQ(r.status, 200);
  rapidjson::Document d;
  d.Parse(r.body.data(), r.body.size());
  const bool opensearch = d["version"].HasMember("distribution");
  EXPECT_EQ(r.product, opensearch ? "" : "Elasticsearch");
  std::printf("[figures] engine %s %s\n", opensearch ? "opensearch" : "elasticsearch",
              d["version"]["number"].GetString());
}

TEST_F(EngineTest, ShipsAThousandDocumentsThenCountsTheResendAsConflicts) {
  const std::string index = index_name("docs");
  for (const char* round : {"first", "resend"}) {
    MemoryRecordSource source;
    std::size_t raw = 0;
    for (int i = 0; i < 1000; ++i) {
      source.add(doc(index, i));
      raw += doc(index, i).size();
    }
    const Run run = ship(source, 1000, shipper_config());
    EXPECT_EQ(run.stats.docs_shipped, 1000u);
    EXPECT_EQ(run.stats.docs_conflict, std::string_view(round) == "first" ? 0u : 1000u);
    EXPECT_EQ(run.stats.request_failures, 0u);
    EXPECT_EQ(run.stats.docs_retried, 0u);
    EXPECT_TRUE(run.reachable);
    EXPECT_EQ(count(index), 1000);
    std::printf(
        "[figures] %s: 1000 docs in %.0f ms, %llu requests, %llu conflicts, %zu bytes of NDJSON sent as %llu gzip "
        "bytes\n",
        round, run.seconds * 1000, static_cast<unsigned long long>(run.stats.requests),
        static_cast<unsigned long long>(run.stats.docs_conflict), raw,
        static_cast<unsigned long long>(run.stats.bytes_sent));
  }
}

TEST_F(EngineTest, ARejectedDocumentLandsInTheDeadLetterIndexWithTheReason) {
  const std::string index = index_name("typed");
  create_index(index, R"({"properties":{"n":{"type":"long"}}})");
  const std::string bad_source = R"({"n":"not a number","minion":"web1"})";
  MemoryRecordSource source;
  source.add(fmt::format(R"({{"create":{{"_index":"{}","_id":"good-1"}}}})"
                         "\n{{\"n\":1}}\n",
                         index));
  source.add(fmt::format(R"({{"create":{{"_index":"{}","_id":"bad"}}}})"
                         "\n{}\n",
                         index, bad_source));
  source.add(fmt::format(R"({{"create":{{"_index":"{}","_id":"good-2"}}}})"
                         "\n{{\"n\":2}}\n",
                         index));
  const auto config = shipper_config();
  // Today's dead-letter index as the shipped contract (mappings/deadletter.json) types it.
  std::ifstream mapping(std::string(SALTTAP_SOURCE_DIR) + "/mappings/deadletter.json");
  const std::string contract((std::istreambuf_iterator<char>(mapping)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(contract.empty());
  const std::string today = IndexLayout{config.dead_letter_prefix, true}.index_name("deadletter", SystemClock().now());
  ASSERT_EQ(call("PUT", "/" + today, contract).first, 200);

  const Run run = ship(source, 3, config);
  EXPECT_EQ(run.stats.docs_shipped, 2u);
  EXPECT_EQ(run.stats.docs_dead_lettered, 1u);
  EXPECT_EQ(count(index), 2);

  const std::string dead_letters = config.dead_letter_prefix + "-deadletter-*";
  EXPECT_EQ(count(dead_letters), 1);
  auto [status, found] = call("POST", "/" + dead_letters + "/_search",
                              fmt::format(R"({{"query":{{"ids":{{"values":["{}/bad"]}}}}}})", index));
  ASSERT_EQ(status, 200);
  ASSERT_EQ(found["hits"]["hits"].Size(), 1u);
  const auto& hit = found["hits"]["hits"][0];
  EXPECT_EQ(std::string(hit["_index"].GetString()).rfind(config.dead_letter_prefix + "-deadletter-20", 0), 0u);
  const auto& d = hit["_source"];
  EXPECT_STREQ(d["index"].GetString(), index.c_str());
  EXPECT_STREQ(d["doc_id"].GetString(), "bad");
  EXPECT_EQ(d["status"].GetInt(), 400);
  EXPECT_STREQ(d["error_type"].GetString(), "mapper_parsing_exception");
  const std::string reason = d["reason"].GetString();
  EXPECT_NE(reason.find("failed to parse field [n]"), std::string::npos) << reason;
  EXPECT_STREQ(d["document"].GetString(), bad_source.c_str());
  EXPECT_TRUE(d.HasMember("@timestamp"));
  std::printf("[figures] dead letter %s: %s\n", hit["_id"].GetString(), reason.c_str());
}

TEST_F(EngineTest, WhenTheDeadLetterIndexRefusesTooTheDocumentGoesToTheLocalFile) {
  const std::string index = index_name("typed2");
  create_index(index, R"({"properties":{"n":{"type":"long"}}})");
  auto config = shipper_config();
  config.dead_letter_prefix = index_name("strict");
  // A dead-letter index that takes no fields at all.
  const std::string today = IndexLayout{config.dead_letter_prefix, true}.index_name("deadletter", SystemClock().now());
  create_index(today, R"({"dynamic":"strict","properties":{}})");
  const auto dir = std::filesystem::temp_directory_path() / ("salttap-engine-dead-" + run_tag());
  MemoryRecordSource source(dir);
  source.add(fmt::format(R"({{"create":{{"_index":"{}","_id":"bad"}}}})"
                         "\n{{\"n\":\"NaN please\"}}\n",
                         index));
  const Run run = ship(source, 1, config);
  EXPECT_EQ(run.stats.docs_dead_letter_file, 1u);
  EXPECT_EQ(run.stats.docs_dead_lettered, 0u);
  std::ifstream in(dir / dead_letter_file_name(SystemClock().now()));
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  rapidjson::Document d;
  d.Parse(line.data(), line.size());
  ASSERT_FALSE(d.HasParseError()) << line;
  EXPECT_STREQ(d["doc_id"].GetString(), "bad");
  EXPECT_STREQ(d["document"].GetString(), R"({"n":"NaN please"})");
  EXPECT_NE(std::string(d["refused"].GetString()).find("strict_dynamic_mapping_exception"), std::string::npos) << line;
  std::filesystem::remove_all(dir);
}

TEST_F(EngineTest, AMalformedRecordIsIsolatedAndTheRestDelivered) {
  const std::string index = index_name("malformed");
  MemoryRecordSource source;
  for (int i = 0; i < 6; ++i) {
    if (i == 3)
      source.add(fmt::format(R"({{"create":{{"_index":"{}","_id":"broken")"
                             "\n{{\"n\":3}}\n",
                             index));
    else
      source.add(doc(index, i));
  }
  const auto config = shipper_config();
  const Run run = ship(source, 6, config);
  EXPECT_EQ(run.stats.docs_shipped, 5u);
  EXPECT_EQ(run.stats.docs_dead_lettered, 1u);
  EXPECT_GE(run.stats.failures[static_cast<std::size_t>(RequestFailure::http_4xx)], 1u);
  EXPECT_EQ(count(index), 5);
  std::printf("[figures] malformed record: %llu requests to isolate it among 6\n",
              static_cast<unsigned long long>(run.stats.requests));
}

TEST_F(EngineTest, ADeadHostFirstFailsOverToTheLiveEngine) {
  const salttap::testing::LoopbackPort dead;  // bound, never listening: refused
  const std::vector<std::string> hosts = {fmt::format("127.0.0.1:{}", dead.port()), url_};

  const std::string index = index_name("failover");
  MemoryRecordSource source;
  for (int i = 0; i < 500; ++i) source.add(doc(index, i));
  const Run run = ship(source, 500, shipper_config(), hosts);
  EXPECT_EQ(run.stats.docs_shipped, 500u);
  EXPECT_EQ(run.stats.request_failures, 0u) << "the client failed over within each request";
  EXPECT_TRUE(run.reachable);
  EXPECT_EQ(count(index), 500);
}

}  // namespace
}  // namespace salttap::indexer
