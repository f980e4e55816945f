#include "service/setup_command.h"

#include <cstdio>

#include "common/log.h"
#include "indexer/curl_http_client.h"
#include "indexer/index_setup.h"
#include "service/run_command.h"

namespace salttap::service {

int run_setup(const Config& config, const BusOptions& bus) {
  const indexer::IndexerConfig ix = effective_indexer_config(config, bus.master());
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
  return 0;
}

}  // namespace salttap::service
