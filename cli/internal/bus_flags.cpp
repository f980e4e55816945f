#include "cli/internal/bus_flags.h"

#include <CLI/CLI.hpp>

namespace salttap::cli {

void add_bus_flags(CLI::App& command, config::BusLocation& bus) {
  command.add_option("--master-config", bus.master_config, "The salt-master's config (sock_dir, ipc_mode, ports)")
      ->capture_default_str()
      ->each([&bus](const std::string&) { bus.master_config_given = true; });
  command.add_option("--sock-dir", bus.sock_dir, "The master's sock_dir (overrides the config)");
  command.add_option("--tcp", bus.tcp, "HOST:PORT of the master's event pub port (ipc_mode: tcp); pull is PORT+1");
  command.add_option("--zmq", bus.zmq,
                     "ZeroMQ endpoint of a Salt 2015.x bus, e.g. ipc:///var/run/salt/master/master_event_pub.ipc");
}

}  // namespace salttap::cli
