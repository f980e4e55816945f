#include "config/bus_location.h"

#include <filesystem>

#include <charconv>

#include "common/config_error.h"

namespace salttap::config {
namespace {

tap::Endpoint parse_host_port(const std::string& text, std::uint16_t port_offset) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) throw ConfigError("--tcp: expected HOST:PORT, got '" + text + "'");
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string_view digits = std::string_view(text).substr(colon + 1);
  int port = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc{} || end != digits.data() + digits.size() || port <= 0 || port + port_offset > 65535)
    throw ConfigError("--tcp: bad port in '" + text + "'");
  return tap::Endpoint::tcp(host, static_cast<std::uint16_t>(port + port_offset));
}

}  // namespace

tap::MasterBus BusLocation::master() const {
  tap::MasterBus bus = tap::load_master_config(master_config, master_config_given);
  if (!sock_dir.empty()) {
    bus.sock_dir = sock_dir;
    bus.tcp = false;
  }
  return bus;
}

tap::Endpoint BusLocation::pub() const {
  if (!zmq.empty()) return tap::Endpoint::zmq(zmq);
  if (!tcp.empty()) return parse_host_port(tcp, 0);
  return master().pub();
}

tap::Endpoint BusLocation::pull() const {
  if (!zmq.empty()) {
    std::string e = zmq;
    if (auto pos = e.rfind("master_event_pub.ipc"); pos != std::string::npos)
      e.replace(pos, 20, "master_event_pull.ipc");
    return tap::Endpoint::zmq(e);
  }
  if (!tcp.empty()) return parse_host_port(tcp, 1);
  return master().pull();
}

}  // namespace salttap::config
