// What _cluster/health answers, read as the cluster status salttap publishes.

#include "indexer/cluster_health.h"

#include <gtest/gtest.h>

namespace salttap::indexer {
namespace {

http::HttpResponse answer(long status, std::string body) {
  http::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

TEST(ClusterHealth, TheStatusAndNodeCountOfAnAnswer) {
  for (const auto& [status, want] :
       {std::pair{"green", ClusterStatus::green}, std::pair{"yellow", ClusterStatus::yellow},
        std::pair{"red", ClusterStatus::red}}) {
    const ClusterHealth h =
        parse_cluster_health(answer(200, std::string(R"({"status":")") + status + R"(","number_of_nodes":3})"));
    EXPECT_EQ(h.status, want) << status;
    EXPECT_EQ(h.nodes, 3);
    EXPECT_EQ(to_string(h.status), status);
  }
}

TEST(ClusterHealth, NoClusterManagerIsRedNoAnswerIsUnreachable) {
  const ClusterHealth none = parse_cluster_health(
      answer(503, R"({"error":{"type":"cluster_manager_not_discovered_exception"},"status":503})"));
  EXPECT_EQ(none.status, ClusterStatus::red);
  EXPECT_EQ(none.nodes, -1);
  EXPECT_EQ(none.detail, "HTTP 503: cluster_manager_not_discovered_exception");
  http::HttpResponse refused;
  refused.error = "http://es1:9200: connection refused";
  const ClusterHealth gone = parse_cluster_health(refused);
  EXPECT_EQ(gone.status, ClusterStatus::unreachable);
  EXPECT_EQ(gone.detail, refused.error);
  EXPECT_EQ(parse_cluster_health(answer(403, R"({"error":{"type":"security_exception"}})")).status,
            ClusterStatus::unknown)
      << "not allowed to ask: no claim about the cluster";
  EXPECT_EQ(parse_cluster_health(answer(200, "not json")).status, ClusterStatus::unknown);
}

TEST(ClusterHealth, TheRequestBoundsTheClusterManagerWaitInTheServersTerms) {
  ServerInfo os2;
  os2.flavor = Flavor::opensearch;
  os2.version.major = 2;
  ServerInfo es7;
  es7.flavor = Flavor::elasticsearch;
  es7.version.major = 7;
  ServerInfo os1 = os2;
  os1.version.major = 1;
  EXPECT_NE(cluster_health_request(os2).path.find("cluster_manager_timeout=5s"), std::string::npos);
  EXPECT_NE(cluster_health_request(es7).path.find("master_timeout=5s"), std::string::npos);
  EXPECT_NE(cluster_health_request(os1).path.find("master_timeout=5s"), std::string::npos);
  EXPECT_EQ(cluster_health_request(es7).method, "GET");
  EXPECT_FALSE(cluster_health_request(es7).failover_on_unavailable) << "a 503 is the cluster's answer";
}

}  // namespace
}  // namespace salttap::indexer
