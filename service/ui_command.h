#pragma once
// `salttap ui`: the job browser on its own listener (127.0.0.1:9109 by
// default), with /metrics and /healthz for itself beside /ui/. The engine is
// found as `salttap jobs` finds it. `run` serves the same browser under /ui/
// on its metrics listener (run_ui_handler). Reference: docs/ui.md.

#include <memory>
#include <string>

#include "common/clock.h"
#include "indexer/indexer_config.h"
#include "service/config.h"
#include "service/ui_auth.h"
#include "service/ui_service.h"

namespace salttap::service {

struct UiOptions {
  std::string listen;  // empty: the config's ui.listen
  Config config = default_config();
  std::string master_config;
  bool master_config_given = false;
};

// The basic auth `ui:` asks for, its password_file read. Throws ConfigError.
UiAuth ui_auth(const UiConfig& config);
// Whether a listen address ("HOST:PORT") is on the loopback interface.
bool loopback_listen(const std::string& listen);

// The browser over the engine of `indexer` (secrets resolved).
std::unique_ptr<UiService> make_ui_service(const indexer::IndexerConfig& indexer, const UiConfig& ui,
                                           const Clock& clock, bool root_redirect);

// Until SIGINT / SIGTERM. 0, or 1 with an ERROR line (bad config, cannot bind).
int run_ui(const UiOptions& options);

}  // namespace salttap::service
