#include "cli/internal/check_config_command.h"

#include <cstdio>

#include <CLI/CLI.hpp>

namespace salttap::cli {

Command add_check_config_command(CLI::App& app, std::string& config_path) {
  auto* cmd = app.add_subcommand("check-config", "Validate a salttap config file and exit");
  cmd->add_option("file", config_path, "Config file (YAML)")->required();
  return {cmd, [](Invocation& call) {
            call.config();  // throws ConfigError: exit 1 with the reason
            std::printf("%s: ok\n", call.config_path().c_str());
            return 0;
          }};
}

}  // namespace salttap::cli
