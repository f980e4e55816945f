#pragma once
// `salttap setup`: detect the engine and install the index contract
// (templates, retention policy) now, as `run` does at every start. Prints
// what was installed and what degraded; exit 0 when the engine is ready.
// With a dashboards URL, then imports the saved objects for the engine's
// product (dashboards_import.h).

#include <string>

#include "service/bus_options.h"
#include "service/config.h"

namespace salttap::service {

struct DashboardsOptions {
  std::string url;   // empty: no import
  std::string file;  // empty: the installed (or source tree's) export for the engine's product
};

int run_setup(const Config& config, const BusOptions& bus, const DashboardsOptions& dashboards = {});

}  // namespace salttap::service
