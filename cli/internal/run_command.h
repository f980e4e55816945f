#pragma once
// `salttap run`: the daemon's flags (daemon/daemon.h runs it).

#include <string>

#include "cli/internal/command.h"

namespace salttap::cli {

// Registers `run` on `app`; --config goes to `config_path`.
Command add_run_command(CLI::App& app, std::string& config_path);

}  // namespace salttap::cli
