// Server detection from recorded `GET /` answers, one row per server.
// ES 7.17.29, OpenSearch 2.19.6 and its compatibility mode were recorded from
// the test engines (tests/engines); the others follow the servers' banners.

#include <gtest/gtest.h>

#include "common/text.h"
#include "indexer/server_info.h"

namespace salttap::indexer {
namespace {

constexpr const char* kEs717 = R"({
  "name" : "node-1",
  "cluster_name" : "salttap-test",
  "cluster_uuid" : "GGazTswKRkeqYgxdxmnb-Q",
  "version" : {
    "number" : "7.17.29",
    "build_flavor" : "default",
    "build_type" : "tar",
    "build_hash" : "580aff1a0064ce4c93293aaab6fcc55e22c10d1c",
    "build_date" : "2025-06-19T01:37:57.847711500Z",
    "build_snapshot" : false,
    "lucene_version" : "8.11.3",
    "minimum_wire_compatibility_version" : "6.8.0",
    "minimum_index_compatibility_version" : "6.0.0-beta1"
  },
  "tagline" : "You Know, for Search"
})";

constexpr const char* kEs8 = R"({
  "name" : "es01",
  "cluster_name" : "docker-cluster",
  "cluster_uuid" : "m3Lp3d5mQHy6vXx2kT0bGw",
  "version" : {
    "number" : "8.15.3",
    "build_flavor" : "default",
    "build_type" : "docker",
    "build_hash" : "f97532e680b555c3a05e73a74c28afb666923018",
    "build_date" : "2024-10-09T22:08:00.328917561Z",
    "build_snapshot" : false,
    "lucene_version" : "9.11.1",
    "minimum_wire_compatibility_version" : "7.17.0",
    "minimum_index_compatibility_version" : "7.0.0"
  },
  "tagline" : "You Know, for Search"
})";

constexpr const char* kEs9 = R"({
  "name" : "es01",
  "cluster_name" : "docker-cluster",
  "cluster_uuid" : "1gGkq3yTTQ2mAD9Po2V0Gg",
  "version" : {
    "number" : "9.1.2",
    "build_flavor" : "default",
    "build_type" : "docker",
    "build_hash" : "ca1a70216fbdefbef3c65b1dff04903ea5964ef5",
    "build_date" : "2025-08-11T15:04:41.449624592Z",
    "build_snapshot" : false,
    "lucene_version" : "10.2.2",
    "minimum_wire_compatibility_version" : "8.19.0",
    "minimum_index_compatibility_version" : "8.0.0"
  },
  "tagline" : "You Know, for Search"
})";

constexpr const char* kEs75Oss = R"({"name":"n","cluster_name":"c","version":{"number":"7.5.2",
  "build_flavor":"oss","build_type":"tar","lucene_version":"8.3.0"},"tagline":"You Know, for Search"})";
constexpr const char* kEs710Default = R"({"name":"n","version":{"number":"7.10.2","build_flavor":"default",
  "lucene_version":"8.7.0"},"tagline":"You Know, for Search"})";
constexpr const char* kEs76 = R"({"name":"n","version":{"number":"7.6.2","build_flavor":"default",
  "lucene_version":"8.4.0"},"tagline":"You Know, for Search"})";
constexpr const char* kEs68 = R"({"name":"n","version":{"number":"6.8.23","build_flavor":"default",
  "lucene_version":"7.7.3"},"tagline":"You Know, for Search"})";

constexpr const char* kOs13 = R"({
  "name" : "opensearch-node1",
  "cluster_name" : "opensearch-cluster",
  "cluster_uuid" : "pJ5kqHJtQ0mZ3l1x3Rz0bw",
  "version" : {
    "distribution" : "opensearch",
    "number" : "1.3.20",
    "build_type" : "tar",
    "build_hash" : "ab3f1ad1e8fa6c7c0b2c2b6d5c7e3f0b1a2d3e4f",
    "build_date" : "2024-11-22T21:52:48.394431Z",
    "build_snapshot" : false,
    "lucene_version" : "8.10.1",
    "minimum_wire_compatibility_version" : "6.8.0",
    "minimum_index_compatibility_version" : "6.0.0-beta1"
  },
  "tagline" : "The OpenSearch Project: https://opensearch.org/"
})";

constexpr const char* kOs219 = R"({
  "name" : "node-1",
  "cluster_name" : "salttap-test",
  "cluster_uuid" : "T1HOUQSjSKOrMdPHgbrwPQ",
  "version" : {
    "distribution" : "opensearch",
    "number" : "2.19.6",
    "build_type" : "unknown",
    "build_hash" : "97d3c13bf22a4a72ac11dc503fe44c97662b9161",
    "build_date" : "2026-07-01T04:27:16.038403104Z",
    "build_snapshot" : false,
    "lucene_version" : "9.12.3",
    "minimum_wire_compatibility_version" : "7.10.0",
    "minimum_index_compatibility_version" : "7.0.0"
  },
  "tagline" : "The OpenSearch Project: https://opensearch.org/"
})";

constexpr const char* kOs26 = R"({"name":"n","version":{"distribution":"opensearch","number":"2.6.0",
  "lucene_version":"9.5.0"},"tagline":"The OpenSearch Project: https://opensearch.org/"})";

constexpr const char* kOs3 = R"({
  "name" : "opensearch-node1",
  "cluster_name" : "opensearch-cluster",
  "cluster_uuid" : "Xx3lq2bVQv2c7ccJ3cDdYg",
  "version" : {
    "distribution" : "opensearch",
    "number" : "3.2.0",
    "build_type" : "tar",
    "build_hash" : "6adc0bf476e1624190564d7fbe4aba00ccf49ad8",
    "build_date" : "2025-08-12T03:55:01.226522683Z",
    "build_snapshot" : false,
    "lucene_version" : "10.2.2",
    "minimum_wire_compatibility_version" : "2.19.0",
    "minimum_index_compatibility_version" : "2.0.0"
  },
  "tagline" : "The OpenSearch Project: https://opensearch.org/"
})";

// OpenSearch 2.19.6 with compatibility.override_main_response_version: true.
constexpr const char* kOs219Compat = R"({
  "name" : "node-1",
  "cluster_name" : "salttap-test",
  "cluster_uuid" : "T1HOUQSjSKOrMdPHgbrwPQ",
  "version" : {
    "number" : "7.10.2",
    "build_type" : "unknown",
    "build_hash" : "97d3c13bf22a4a72ac11dc503fe44c97662b9161",
    "build_date" : "2026-07-01T04:27:16.038403104Z",
    "build_snapshot" : false,
    "lucene_version" : "9.12.3",
    "minimum_wire_compatibility_version" : "7.10.0",
    "minimum_index_compatibility_version" : "7.0.0"
  },
  "tagline" : "The OpenSearch Project: https://opensearch.org/"
})";

constexpr const char* kOs13Compat = R"({"name":"n","version":{"number":"7.10.2","build_type":"tar",
  "lucene_version":"8.10.1"},"tagline":"The OpenSearch Project: https://opensearch.org/"})";

http::HttpResponse answer(long status, std::string body, std::string product = {}) {
  http::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.product = std::move(product);
  r.host = "http://es.example:9200";
  return r;
}

// What a flavor's release line can do: most rows share one of a few.
struct Capabilities {
  Flavor flavor;
  bool composable;
  std::string_view flat;
  LifecycleApi lifecycle;
};
constexpr Capabilities kEs{Flavor::elasticsearch, true, "flattened", LifecycleApi::ilm};
constexpr Capabilities kEsLegacyTemplates{Flavor::elasticsearch, false, "flattened", LifecycleApi::ilm};
constexpr Capabilities kEsOss{Flavor::elasticsearch, false, "", LifecycleApi::ilm};
constexpr Capabilities kOsNoFlatObject{Flavor::opensearch, true, "", LifecycleApi::ism};
constexpr Capabilities kOs{Flavor::opensearch, true, "flat_object", LifecycleApi::ism};

struct Row {
  const char* name;
  http::HttpResponse response;
  ServerVersion version;
  Capabilities caps;
  const char* describe;
  bool hidden = false;
};

// ctest shows the row's name, not its bytes.
void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

class ServerInfoTable : public ::testing::TestWithParam<Row> {};

TEST_P(ServerInfoTable, DetectsFlavorVersionAndCapabilities) {
  const Row& row = GetParam();
  const ServerDetection d = detect_server(row.response);
  ASSERT_TRUE(d.error.empty()) << d.error;
  const ServerInfo& info = d.info;
  EXPECT_TRUE(info.usable()) << info.problem;
  EXPECT_EQ(info.flavor, row.caps.flavor);
  EXPECT_EQ(info.version, row.version);
  EXPECT_EQ(info.version_hidden, row.hidden);
  EXPECT_EQ(composable_templates(info), row.caps.composable);
  EXPECT_EQ(flat_type(info), row.caps.flat);
  EXPECT_EQ(lifecycle_api(info), row.caps.lifecycle);
  EXPECT_FALSE(compatibility_headers_needed(info));
  EXPECT_EQ(info.describe(), row.describe);
}

INSTANTIATE_TEST_SUITE_P(
    RecordedBanners, ServerInfoTable,
    ::testing::Values(
        Row{"es_7_17", answer(200, kEs717, "Elasticsearch"), {7, 17, 29}, kEs, "Elasticsearch 7.17.29"},
        Row{"es_8", answer(200, kEs8, "Elasticsearch"), {8, 15, 3}, kEs, "Elasticsearch 8.15.3"},
        Row{"es_9", answer(200, kEs9, "Elasticsearch"), {9, 1, 2}, kEs, "Elasticsearch 9.1.2"},
        // Before 7.14 there is no X-Elastic-Product header: the tagline tells.
        Row{"es_7_10_default", answer(200, kEs710Default), {7, 10, 2}, kEs, "Elasticsearch 7.10.2"},
        Row{"es_7_6_legacy_templates", answer(200, kEs76), {7, 6, 2}, kEsLegacyTemplates, "Elasticsearch 7.6.2"},
        Row{"es_7_5_oss_no_flattened", answer(200, kEs75Oss), {7, 5, 2}, kEsOss, "Elasticsearch 7.5.2 (oss)"},
        Row{"os_1_3", answer(200, kOs13), {1, 3, 20}, kOsNoFlatObject, "OpenSearch 1.3.20"},
        Row{"os_2_6_before_flat_object", answer(200, kOs26), {2, 6, 0}, kOsNoFlatObject, "OpenSearch 2.6.0"},
        Row{"os_2_19", answer(200, kOs219), {2, 19, 6}, kOs, "OpenSearch 2.19.6"},
        Row{"os_3", answer(200, kOs3), {3, 2, 0}, kOs, "OpenSearch 3.2.0"},
        Row{"os_2_compat_mode",
            answer(200, kOs219Compat),
            {2, 0, 0},
            kOs,
            "OpenSearch 2.x (version hidden: reports 7.10.2)",
            true},
        Row{"os_1_compat_mode",
            answer(200, kOs13Compat),
            {1, 0, 0},
            kOsNoFlatObject,
            "OpenSearch 1.x (version hidden: reports 7.10.2)",
            true}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(ServerInfo, ProductHeaderAloneMakesElasticsearch) {
  // An ES >= 7.14 behind a proxy that rewrote the tagline still sends the header.
  const auto d = detect_server(answer(200, R"({"version":{"number":"8.1.0"},"tagline":"hi"})", "Elasticsearch"));
  EXPECT_EQ(d.info.flavor, Flavor::elasticsearch);
  EXPECT_TRUE(d.info.usable());
}

TEST(ServerInfo, AuthFailureTellsTheOperatorToConfigureCredentials) {
  for (long status : {401L, 403L}) {
    const auto d = detect_server(answer(
        status,
        R"({"error":{"type":"security_exception","reason":"missing authentication credentials"},"status":401})"));
    EXPECT_NE(d.error.find("requires authentication"), std::string::npos) << d.error;
    EXPECT_NE(d.error.find("credentials"), std::string::npos) << d.error;
    EXPECT_NE(d.error.find(std::to_string(status)), std::string::npos) << d.error;
    EXPECT_EQ(d.info.flavor, Flavor::unknown);
  }
}

TEST(ServerInfo, NoAnswerNamesTheHost) {
  http::HttpResponse r;
  r.host = "http://10.0.0.1:9200";
  r.error = "Connection refused";
  const auto d = detect_server(r);
  EXPECT_NE(d.error.find("http://10.0.0.1:9200"), std::string::npos);
  EXPECT_NE(d.error.find("Connection refused"), std::string::npos);

  // The client's own errors start with the host: it is named once.
  r.host = "https://es:9200";
  r.error = "https://es:9200: TLS failed: SSL certificate problem: unable to get local issuer certificate";
  r.tls_failed = true;
  EXPECT_EQ(detect_server(r).error,
            "cannot reach the engine at https://es:9200: TLS failed: SSL certificate problem: unable to get local "
            "issuer certificate");
}

TEST(ServerInfo, OtherHttpErrorIsReported) {
  const auto d = detect_server(answer(503, "<html>Service Unavailable</html>"));
  EXPECT_NE(d.error.find("503"), std::string::npos);
  EXPECT_NE(d.error.find("Service Unavailable"), std::string::npos);
}

TEST(ServerInfo, GarbageAndTruncatedBannersAreUnknown) {
  const std::string truncated = std::string(kEs717).substr(0, 150);
  for (const std::string& body : {std::string("<html><body>It works!</body></html>"), truncated, std::string(),
                                  std::string(R"({"version":"7.17.0"})"), std::string("[]"),
                                  std::string(R"({"name":"x","tagline":"You Know, for Search"})")}) {
    const auto d = detect_server(answer(200, body));
    EXPECT_TRUE(d.error.empty());
    EXPECT_EQ(d.info.flavor, Flavor::unknown) << body;
    EXPECT_FALSE(d.info.usable());
    EXPECT_NE(d.info.problem.find("banner"), std::string::npos) << d.info.problem;
    EXPECT_EQ(lifecycle_api(d.info), LifecycleApi::none);
    EXPECT_EQ(flat_type(d.info), "");
    EXPECT_FALSE(composable_templates(d.info));
  }
}

TEST(ServerInfo, SomethingElseWithAVersionIsUnknown) {
  const auto d = detect_server(answer(200, R"({"version":{"number":"0.40.0"},"tagline":"Quickwit"})"));
  EXPECT_EQ(d.info.flavor, Flavor::unknown);
  EXPECT_NE(d.info.problem.find("neither"), std::string::npos) << d.info.problem;
}

TEST(ServerInfo, UnreadableVersionNumber) {
  const auto d = detect_server(answer(200, R"({"version":{"number":"seven"},"tagline":"You Know, for Search"})"));
  EXPECT_FALSE(d.info.usable());
  EXPECT_NE(d.info.problem.find("seven"), std::string::npos);
}

TEST(ServerInfo, Elasticsearch6IsNotSupported) {
  const auto d = detect_server(answer(200, kEs68));
  EXPECT_EQ(d.info.flavor, Flavor::elasticsearch);
  EXPECT_FALSE(d.info.usable());
  EXPECT_NE(d.info.problem.find("not supported"), std::string::npos);
}

TEST(ServerInfo, SnapshotVersion) {
  const auto d = detect_server(answer(
      200, R"({"version":{"number":"8.16.0-SNAPSHOT","build_flavor":"default"},"tagline":"You Know, for Search"})"));
  EXPECT_EQ(d.info.version, (ServerVersion{8, 16, 0}));
}

TEST(ServerInfo, AnUnreadableVersionPartCountsAsZero) {
  // Regression: corpus/server_info/crash-negative-patch-version.
  const auto d = detect_server(
      answer(200, R"({"version":{"number":"7.17.-9.1"},"tagline":"You Know, for Search"})", "Elasticsearch"));
  EXPECT_TRUE(d.info.usable()) << d.info.problem;
  EXPECT_EQ(d.info.version, (ServerVersion{7, 17, 0}));
  const auto bad_minor =
      detect_server(answer(200, R"({"version":{"number":"7.-1"},"tagline":"You Know, for Search"})"));
  EXPECT_NE(bad_minor.info.problem.find("unreadable version number '7.-1'"), std::string::npos)
      << bad_minor.info.problem;
}

TEST(ServerInfo, ProblemsQuoteTheBannerOnOneBoundedLine) {
  // Regression: corpus/server_info/edge-distribution-multiline-long, edge-number-multiline.
  const auto other = detect_server(
      answer(200, R"({"version":{"distribution":"line1\nline2\r)" + std::string(300, 'd') + R"(","number":"1.0.0"}})"));
  EXPECT_EQ(other.info.flavor, Flavor::unknown);
  EXPECT_EQ(other.info.problem.find_first_of("\n\r"), std::string::npos) << other.info.problem;
  EXPECT_NE(other.info.problem.find("distribution 'line1 line2 ddd"), std::string::npos) << other.info.problem;
  EXPECT_LT(other.info.problem.size(), 300u);

  const auto es6 = detect_server(answer(
      200, R"({"version":{"number":"6.8\nforged)" + std::string(300, 'x') + R"("},"tagline":"You Know, for Search"})"));
  EXPECT_FALSE(es6.info.usable());
  EXPECT_EQ(es6.info.problem.find_first_of("\n\r"), std::string::npos) << es6.info.problem;
  EXPECT_NE(es6.info.problem.find("Elasticsearch 6.8 forged"), std::string::npos) << es6.info.problem;
  EXPECT_LT(es6.info.problem.size(), 300u);
}

TEST(ServerInfo, ExcerptsEndOnACharacterBoundary) {
  // Regression: corpus/server_info/crash-excerpt-cut-inside-a-character.
  std::string omegas;
  for (int i = 0; i < 200; ++i) omegas += "\u03a9";  // two bytes each
  const auto d = detect_server(answer(500, "x" + omegas));
  EXPECT_TRUE(is_valid_utf8(d.error)) << d.error;
  EXPECT_NE(d.error.find(": x" + omegas.substr(0, 118) + "\u2026"), std::string::npos) << d.error;
  const auto tagline = detect_server(answer(200, R"({"version":{"number":"1.0"},"tagline":"x)" + omegas + R"("})"));
  EXPECT_TRUE(is_valid_utf8(tagline.info.problem)) << tagline.info.problem;
}

TEST(ServerInfo, ADeeplyNestedBannerIsParsedWithoutRecursion) {
  // Regression: corpus/server_info/edge-deep-nesting (the recursive parser overflowed the stack).
  const auto d =
      detect_server(answer(200, R"({"version":)" + std::string(200000, '[') + std::string(200000, ']') + "}"));
  EXPECT_EQ(d.info.flavor, Flavor::unknown);
  EXPECT_NE(d.info.problem.find("banner"), std::string::npos);
}

}  // namespace
}  // namespace salttap::indexer
