#pragma once
// The four flags every command that reaches the bus takes: --master-config,
// --sock-dir, --tcp, --zmq.

#include "config/bus_location.h"

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's own namespace
class App;
}

namespace salttap::cli {

void add_bus_flags(CLI::App& command, config::BusLocation& bus);

}  // namespace salttap::cli
