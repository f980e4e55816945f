#include "cli/internal/setup_command.h"

#include <CLI/CLI.hpp>
#include <memory>
#include "cli/internal/bus_flags.h"

#include <cstdio>

#include "common/log.h"
#include "config/resolve.h"
#include "dashboards/dashboards_import.h"
#include "dashboards/saved_objects.h"
#include "http/curl_http_client.h"
#include "indexer/index_setup.h"

namespace salttap::cli {

int run_setup(const config::Config& config, const config::BusLocation& bus, const DashboardsOptions& dashboards) {
  const indexer::IndexerConfig ix = config::effective_indexer_config(config, bus.master());
  // A file named on the command line is read first: a typo costs no engine round trip.
  dashboards::SavedObjectsFile file;
  if (!dashboards.url.empty() && !dashboards.file.empty()) {
    file = dashboards::read_saved_objects(dashboards.file);
    if (!file.error.empty()) {
      log::error("setup: dashboards: cannot read the saved objects: {}", file.error);
      return dashboards::kDashboardsFile;
    }
  }
  auto http = http::make_curl_client(ix.http);
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

  const dashboards::DashboardsProduct product = dashboards::dashboards_for(r.server.flavor);
  if (dashboards.file.empty()) {
    file = dashboards::find_saved_objects(dashboards::saved_objects_candidates(product));
    if (!file.error.empty()) {
      log::error("setup: dashboards: {}", file.error);
      return dashboards::kDashboardsFile;
    }
  }
  const dashboards::SavedObjects objects = dashboards::prepare_saved_objects(file.text, ix.documents.layout.prefix);
  if (!objects.error.empty()) {
    log::error("setup: dashboards: {}: {}", file.path.string(), objects.error);
    return dashboards::kDashboardsFile;
  }
  std::printf("dashboards: %s, %zu objects for %.*s, index prefix %s\n", file.path.c_str(), objects.objects,
              static_cast<int>(product.name.size()), product.name.data(), ix.documents.layout.prefix.c_str());
  std::fflush(stdout);
  // The engine's TLS and credentials, sent to the dashboards URL instead.
  http::HttpClientConfig http_config = ix.http;
  http_config.hosts = {dashboards.url};
  auto dashboards_http = http::make_curl_client(http_config);
  return dashboards::import_dashboards(*dashboards_http, {dashboards.url, objects.ndjson, objects.objects, product},
                                       stdout);
}

Command add_setup_command(CLI::App& app, std::string& config_path) {
  struct Flags {
    config::BusLocation bus;
    DashboardsOptions dashboards;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("setup",
                                 "Detect the engine and install index templates and the retention "
                                 "policy (run does this at every start)");
  add_bus_flags(*cmd, f->bus);
  cmd->add_option("--config", config_path, "salttap config file (YAML) with an indexer: section");
  auto* dashboards = cmd->add_option(
      "--dashboards", f->dashboards.url,
      "Then import salttap's saved objects into the Kibana (Elasticsearch) or OpenSearch Dashboards (OpenSearch) "
      "at this base URL, with the indexer's TLS and credentials (exit codes: docs/commands.md)");
  cmd->add_option("--dashboards-file", f->dashboards.file,
                  "The saved-objects NDJSON to import (default: the installed export for the engine's product)")
      ->needs(dashboards);
  return {cmd,
          [f](Invocation& call) {
            config::BusLocation bus = f->bus;
            config::choose_master_config(call.config(), bus.master_config, bus.master_config_given);
            return run_setup(call.config(), bus, f->dashboards);
          },
          true};
}

}  // namespace salttap::cli
