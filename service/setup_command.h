#pragma once
// `salttap setup`: detect the engine and install the index contract
// (templates, retention policy) now, as `run` does at every start. Prints
// what was installed and what degraded; exit 0 when the engine is ready.

#include "service/bus_options.h"
#include "service/config.h"

namespace salttap::service {

int run_setup(const Config& config, const BusOptions& bus);

}  // namespace salttap::service
