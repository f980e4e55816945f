#pragma once
// `salttap fire`: fire one event with salttap's tag prefix into the master's
// pull socket (for testing reactors on salttap's alerts).

#include <string>

#include "service/bus_options.h"

namespace salttap::service {

struct FireOptions {
  BusOptions bus;
  std::string tag;
  std::string data_json = "{}";
  std::string framing = "auto";  // auto | plain | len32
};

int run_fire(const FireOptions& options);

}  // namespace salttap::service
