#pragma once
// `salttap run`: the daemon. Taps the master's bus, correlates, builds the
// documents, spools them and ships them to Elasticsearch / OpenSearch;
// alerts go to the log, a webhook, the alerts index and optionally the bus.
// SIGTERM / SIGINT: stop reading, spool what was built, give in-flight bulk
// requests `drain` to finish; the spool keeps the rest for the next start.
// SIGHUP: `config_path` is read again and what can change without a restart
// is applied between two batches of events (config_reload.h).

#include <chrono>
#include <string>

#include "config/bus_location.h"
#include "config/config.h"
#include "tap/decode_limits.h"

namespace salttap::daemon {

struct DaemonOptions {
  config::BusLocation bus;
  tap::DecodeLimits limits;
  std::string metrics_listen = "127.0.0.1:9108";  // empty: off
  std::chrono::milliseconds drain{10000};
  config::Config config = config::default_config();
  std::string config_path;  // where `config` came from; empty: the defaults (a reload reads nothing)
};

int run_daemon(const DaemonOptions& options);

}  // namespace salttap::daemon
