#pragma once
// Where to find the bus: the master's own config by default, or explicit
// flags (cli/bus_flags.h). A bad --tcp is a ConfigError.

#include <string>

#include "tap/endpoint.h"
#include "tap/master_config.h"

namespace salttap::config {

struct BusLocation {
  std::string master_config = tap::kDefaultMasterConfig;
  bool master_config_given = false;
  std::string sock_dir;  // overrides the config's sock_dir
  std::string tcp;       // HOST:PORT of the pub socket (ipc_mode: tcp)
  std::string zmq;       // ZeroMQ endpoint (Salt 2015.x), e.g. ipc:///var/run/salt/master/master_event_pub.ipc

  tap::Endpoint pub() const;
  tap::Endpoint pull() const;  // firing: same flags, pull socket
  tap::MasterBus master() const;
};

}  // namespace salttap::config
