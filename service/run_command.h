#pragma once
// `salttap run`: the daemon. Taps the master's bus, correlates, builds the
// documents, spools them and ships them to Elasticsearch / OpenSearch;
// alerts go to the log, a webhook, the alerts index and optionally the bus.
// SIGTERM / SIGINT: stop reading, spool what was built, give in-flight bulk
// requests `drain` to finish; the spool keeps the rest for the next start.

#include <chrono>
#include <string>

#include "service/bus_options.h"
#include "service/config.h"
#include "tap/decode_limits.h"
#include "tap/event_queue.h"

namespace salttap::service {

struct RunOptions {
  BusOptions bus;
  tap::DecodeLimits limits;
  tap::QueueLimits queue;
  std::string metrics_listen = "127.0.0.1:9108";  // empty: off
  std::chrono::milliseconds drain{10000};
  Config config = default_config();
};

// The indexer settings `run` and `setup` use: salttap's config, else Salt's
// returner block from the master config. Secrets resolved. Throws ConfigError.
indexer::IndexerConfig effective_indexer_config(const Config& config, const tap::MasterBus& master);

int run_daemon(const RunOptions& options);

}  // namespace salttap::service
