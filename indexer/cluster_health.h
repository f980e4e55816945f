#pragma once
// The engine cluster's health as salttap sees it: `GET /_cluster/health`,
// polled by the index-setup thread once shipping runs
// (IndexerService; IndexerConfig::cluster_health_interval), published as
// salttap_indexer_cluster_status / _cluster_nodes. A 503 without a status
// (no elected cluster-manager) reads as red; no answer from any host as
// unreachable.

#include <cstdint>
#include <string>
#include <string_view>

#include "http/http_client.h"
#include "indexer/server_info.h"

namespace salttap::indexer {

enum class ClusterStatus : std::uint8_t { unknown, green, yellow, red, unreachable };
inline constexpr std::size_t kClusterStatuses = 5;
std::string_view to_string(ClusterStatus status);

struct ClusterHealth {
  ClusterStatus status = ClusterStatus::unknown;
  int nodes = -1;      // number_of_nodes; -1 unknown
  std::string detail;  // why red/unreachable, for the log (no cluster-manager, the transport error)
};

// The request: the cluster-manager wait bounded (the parameter the server's
// flavor and version name), so a cluster without one answers within seconds.
http::HttpRequest cluster_health_request(const ServerInfo& server);
ClusterHealth parse_cluster_health(const http::HttpResponse& response);

}  // namespace salttap::indexer
