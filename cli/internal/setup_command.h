#pragma once
// `salttap setup`: detect the engine and install the index contract
// (templates, retention policy) now, as `run` does at every start. Prints
// what was installed and what degraded; exit 0 when the engine is ready.
// With a dashboards URL, then imports the saved objects for the engine's
// product (dashboards_import.h).

#include <string>

#include "cli/internal/command.h"
#include "config/bus_location.h"
#include "config/config.h"

namespace salttap::cli {

struct DashboardsOptions {
  std::string url;   // empty: no import
  std::string file;  // empty: the installed (or source tree's) export for the engine's product
};

int run_setup(const config::Config& config, const config::BusLocation& bus, const DashboardsOptions& dashboards = {});

// Registers `setup` on `app`; --config goes to `config_path`.
Command add_setup_command(CLI::App& app, std::string& config_path);

}  // namespace salttap::cli
