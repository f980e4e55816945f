#pragma once
// `salttap fire`: fire one event with salttap's tag prefix into the master's
// pull socket (for testing reactors on salttap's alerts).

#include <string>

#include "cli/internal/command.h"
#include "config/bus_location.h"

namespace salttap::cli {

struct FireOptions {
  config::BusLocation bus;
  std::string tag;
  std::string data_json = "{}";
  std::string framing = "auto";  // auto | plain | len32
};

int run_fire(const FireOptions& options);

// Registers `fire` on `app`.
Command add_fire_command(CLI::App& app);

}  // namespace salttap::cli
