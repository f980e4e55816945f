#include "indexer/cluster_health.h"

#include <rapidjson/document.h>

#include "common/json_value.h"

namespace salttap::indexer {

std::string_view to_string(ClusterStatus status) {
  switch (status) {
    case ClusterStatus::green:
      return "green";
    case ClusterStatus::yellow:
      return "yellow";
    case ClusterStatus::red:
      return "red";
    case ClusterStatus::unreachable:
      return "unreachable";
    case ClusterStatus::unknown:
      break;
  }
  return "unknown";
}

http::HttpRequest cluster_health_request(const ServerInfo& server) {
  http::HttpRequest r;
  // OpenSearch 2 and later name the wait for the elected node
  // cluster_manager_timeout; Elasticsearch and OpenSearch 1, master_timeout.
  const bool manager = server.flavor == Flavor::opensearch && server.version.major >= 2;
  r.path = std::string("/_cluster/health?filter_path=status,number_of_nodes,error.type&") +
           (manager ? "cluster_manager_timeout=5s" : "master_timeout=5s");
  r.failover_on_unavailable = false;  // a 503 here is the cluster's state, not the host's
  return r;
}

ClusterHealth parse_cluster_health(const http::HttpResponse& response) {
  ClusterHealth h;
  if (response.status == 0) {
    h.status = ClusterStatus::unreachable;
    h.detail = response.error;
    return h;
  }
  rapidjson::Document doc;
  doc.Parse(response.body.data(), response.body.size());
  const std::string status = doc.HasParseError() ? std::string() : json::string_member(doc, "status");
  if (const auto* n = doc.HasParseError() ? nullptr : json::member(doc, "number_of_nodes"); n && n->IsInt())
    h.nodes = n->GetInt();
  if (response.status >= 200 && response.status < 300 && !status.empty()) {
    h.status = status == "green"    ? ClusterStatus::green
               : status == "yellow" ? ClusterStatus::yellow
                                    : ClusterStatus::red;
    return h;
  }
  // No status: 503 master_not_discovered / cluster_manager_not_discovered, or another refusal.
  h.status = response.status == 503 ? ClusterStatus::red : ClusterStatus::unknown;
  const auto* error = doc.HasParseError() ? nullptr : json::member(doc, "error");
  const std::string type = error ? json::string_member(*error, "type") : std::string();
  h.detail = "HTTP " + std::to_string(response.status) + (type.empty() ? "" : ": " + type);
  return h;
}

}  // namespace salttap::indexer
