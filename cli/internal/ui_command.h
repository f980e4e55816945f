#pragma once
// `salttap ui`: the job browser on its own listener (127.0.0.1:9109 by
// default), with /metrics and /healthz for itself beside /ui/. The engine is
// found as `salttap jobs` finds it. `run` serves the same browser under /ui/
// on its metrics listener. Reference: docs/ui.md.

#include <string>

#include "cli/internal/command.h"
#include "config/config.h"

namespace salttap::cli {

struct UiOptions {
  std::string listen;  // empty: the config's ui.listen
  config::Config config = config::default_config();
  std::string master_config;
  bool master_config_given = false;
};

// Until SIGINT / SIGTERM. 0, or 1 with an ERROR line (bad config, cannot bind).
int run_ui(const UiOptions& options);

// Registers `ui` on `app`; --config goes to `config_path`.
Command add_ui_command(CLI::App& app, std::string& config_path);

}  // namespace salttap::cli
