#include "cli/internal/run_command.h"

#include <memory>

#include <CLI/CLI.hpp>

#include "cli/internal/bus_flags.h"
#include "config/resolve.h"
#include "daemon/daemon.h"

namespace salttap::cli {

Command add_run_command(CLI::App& app, std::string& config_path) {
  struct Flags {
    daemon::DaemonOptions options;
    double drain_seconds = 10;
    std::uint64_t max_frame_mib = tap::DecodeLimits{}.max_frame_bytes >> 20;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("run",
                                 "The daemon: tap the bus, correlate, spool and ship to "
                                 "Elasticsearch / OpenSearch, alert");
  add_bus_flags(*cmd, f->options.bus);
  cmd->add_option("--config", config_path,
                  "salttap config file (YAML) with an indexer: section (without one, "
                  "the master config's elasticsearch: returner block is used)");
  cmd->add_option("--metrics-listen", f->options.metrics_listen,
                  "Serve /metrics and /healthz on HOST:PORT (empty: off)")
      ->capture_default_str();
  cmd->add_option("--drain-seconds", f->drain_seconds, "On SIGTERM, time for in-flight bulk requests")
      ->capture_default_str();
  add_frame_limit(*cmd, f->max_frame_mib);
  return {cmd, [f](Invocation& call) {
            daemon::DaemonOptions options = f->options;
            options.limits.max_frame_bytes = f->max_frame_mib << 20;
            options.config = call.config();
            options.config_path = call.config_path();
            options.drain = from_seconds(f->drain_seconds);
            config::choose_master_config(options.config, options.bus.master_config, options.bus.master_config_given);
            return daemon::run_daemon(options);
          }};
}

}  // namespace salttap::cli
