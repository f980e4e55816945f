#include "service/bus_options.h"

#include <filesystem>

#include <CLI/CLI.hpp>

namespace salttap::service {
namespace {

tap::Endpoint parse_host_port(const std::string& text, std::uint16_t port_offset) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) throw CLI::ValidationError("--tcp", "expected HOST:PORT, got '" + text + "'");
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const int port = std::stoi(text.substr(colon + 1));
  if (port <= 0 || port + port_offset > 65535) throw CLI::ValidationError("--tcp", "bad port in '" + text + "'");
  return tap::Endpoint::tcp(host, static_cast<std::uint16_t>(port + port_offset));
}

}  // namespace

void BusOptions::add_to(CLI::App& command) {
  command.add_option("--master-config", master_config, "The salt-master's config (sock_dir, ipc_mode, ports)")
      ->capture_default_str()
      ->each([this](const std::string&) { master_config_given = true; });
  command.add_option("--sock-dir", sock_dir, "The master's sock_dir (overrides the config)");
  command.add_option("--tcp", tcp, "HOST:PORT of the master's event pub port (ipc_mode: tcp); pull is PORT+1");
  command.add_option("--zmq", zmq,
                     "ZeroMQ endpoint of a Salt 2015.x bus, e.g. ipc:///var/run/salt/master/master_event_pub.ipc");
}

tap::MasterBus BusOptions::master() const {
  tap::MasterBus bus = tap::load_master_config(master_config, master_config_given);
  if (!sock_dir.empty()) {
    bus.sock_dir = sock_dir;
    bus.tcp = false;
  }
  return bus;
}

tap::Endpoint BusOptions::pub() const {
  if (!zmq.empty()) return tap::Endpoint::zmq(zmq);
  if (!tcp.empty()) return parse_host_port(tcp, 0);
  return master().pub();
}

tap::Endpoint BusOptions::pull() const {
  if (!zmq.empty()) {
    std::string e = zmq;
    if (auto pos = e.rfind("master_event_pub.ipc"); pos != std::string::npos)
      e.replace(pos, 20, "master_event_pull.ipc");
    return tap::Endpoint::zmq(e);
  }
  if (!tcp.empty()) return parse_host_port(tcp, 1);
  return master().pull();
}

}  // namespace salttap::service
