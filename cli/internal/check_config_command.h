#pragma once
// `salttap check-config FILE`: read a salttap config as every command would,
// print "FILE: ok" and exit 0, or the error and exit 1.

#include <string>

#include "cli/internal/command.h"

namespace salttap::cli {

// Registers `check-config` on `app`; its file goes to `config_path`.
Command add_check_config_command(CLI::App& app, std::string& config_path);

}  // namespace salttap::cli
