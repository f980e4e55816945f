#pragma once
// `salttap run`: the daemon. Taps the master's bus, correlates, builds the
// documents, spools them and ships them to Elasticsearch / OpenSearch;
// alerts go to the log, a webhook, the alerts index and optionally the bus.
// SIGTERM / SIGINT: stop reading, spool what was built, give in-flight bulk
// requests `drain` to finish; the spool keeps the rest for the next start.
// SIGHUP: `config_path` is read again and what can change without a restart
// is applied between two batches of events (service/config_reload.h).

#include <chrono>
#include <string>

#include "service/bus_options.h"
#include "service/config.h"
#include "tap/decode_limits.h"

namespace salttap::service {

struct RunOptions {
  BusOptions bus;
  tap::DecodeLimits limits;
  std::string metrics_listen = "127.0.0.1:9108";  // empty: off
  std::chrono::milliseconds drain{10000};
  Config config = default_config();
  std::string config_path;  // where `config` came from; empty: the defaults (a reload reads nothing)
};

// The indexer settings `run` and `setup` use: salttap's config, else Salt's
// returner block from the master config. Secrets resolved. Throws ConfigError.
indexer::IndexerConfig effective_indexer_config(const Config& config, const tap::MasterBus& master);

// The config `run` works with: `file`'s, with the engine settled (the
// indexer section, else the master's returner block; secrets read) and the
// master id resolved. At start and at every reload. Throws ConfigError.
Config run_config(Config file, const tap::MasterBus& master);

int run_daemon(const RunOptions& options);

}  // namespace salttap::service
