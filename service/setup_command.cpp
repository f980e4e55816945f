#include "service/setup_command.h"

#include <cstdio>

#include "common/log.h"
#include "indexer/curl_http_client.h"
#include "indexer/index_setup.h"
#include "service/dashboards_import.h"
#include "service/run_command.h"
#include "service/saved_objects.h"

namespace salttap::service {

int run_setup(const Config& config, const BusOptions& bus, const DashboardsOptions& dashboards) {
  const indexer::IndexerConfig ix = effective_indexer_config(config, bus.master());
  // A file named on the command line is read first: a typo costs no engine round trip.
  SavedObjectsFile file;
  if (!dashboards.url.empty() && !dashboards.file.empty()) {
    file = read_saved_objects(dashboards.file);
    if (!file.error.empty()) {
      log::error("setup: dashboards: cannot read the saved objects: {}", file.error);
      return kDashboardsFile;
    }
  }
  auto http = indexer::make_curl_client(ix.http);
  const indexer::IndexSetupReport r =
      indexer::install_index_setup(*http, ix.documents.layout, ix.templates, ix.documents.states);
  if (!r.ok) {
    log::error("setup: {}", r.error);
    return 1;
  }
  std::printf("server: %s\n", r.server.describe().c_str());
  for (const auto& line : r.installed) std::printf("installed: %s\n", line.c_str());
  for (const auto& line : r.degraded) std::printf("degraded: %s\n", line.c_str());
  std::printf("return_flat: %s\n", r.flat_type.empty() ? "not mapped" : r.flat_type.c_str());
  if (dashboards.url.empty()) return 0;

  const DashboardsProduct product = dashboards_for(r.server.flavor);
  if (dashboards.file.empty()) {
    file = find_saved_objects(saved_objects_candidates(product));
    if (!file.error.empty()) {
      log::error("setup: dashboards: {}", file.error);
      return kDashboardsFile;
    }
  }
  const SavedObjects objects = prepare_saved_objects(file.text, ix.documents.layout.prefix);
  if (!objects.error.empty()) {
    log::error("setup: dashboards: {}: {}", file.path.string(), objects.error);
    return kDashboardsFile;
  }
  std::printf("dashboards: %s, %zu objects for %.*s, index prefix %s\n", file.path.c_str(), objects.objects,
              static_cast<int>(product.name.size()), product.name.data(), ix.documents.layout.prefix.c_str());
  std::fflush(stdout);
  // The engine's TLS and credentials, sent to the dashboards URL instead.
  indexer::HttpClientConfig http_config = ix.http;
  http_config.hosts = {dashboards.url};
  auto dashboards_http = indexer::make_curl_client(http_config);
  return import_dashboards(*dashboards_http, {dashboards.url, objects.ndjson, objects.objects, product}, stdout);
}

}  // namespace salttap::service
