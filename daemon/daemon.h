#pragma once
// `salttap run`: the daemon. Taps the master's bus, correlates, builds the
// documents, spools them and ships them to Elasticsearch / OpenSearch;
// alerts go to the log, a webhook, the alerts index and optionally the bus.
// SIGTERM / SIGINT: stop reading, spool what was built, give in-flight bulk
// requests `drain` to finish; the spool keeps the rest for the next start.
// SIGHUP: `config_path` is read again and what can change without a restart
// is applied between two batches of events (config_reload.h).
//
// Its life has four steps, each a member of `Daemon`: the constructor builds
// every part (config resolved, checkpoint restored, nothing running yet),
// start() starts the threads (shipper, tap reader, reconciler), run() is the
// event loop until a stop signal, and stop() writes the last checkpoint and
// drains. run_daemon() does the four in order.

#include <chrono>
#include <memory>
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

class Daemon {
 public:
  // Builds every part; throws (ConfigError, a spool or journal error) when
  // one cannot be built. Nothing runs yet, and the checkpoint is restored.
  explicit Daemon(const DaemonOptions& options);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // The shipper, the tap reader and the reconciler start their threads.
  void start();
  // Events through the pipeline until SIGTERM / SIGINT; reloads on SIGHUP.
  void run();
  // The last checkpoint, then the reader stops and in-flight requests get `drain`.
  void stop();

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

// Installs the signal handlers, then builds, starts, runs and stops a Daemon.
int run_daemon(const DaemonOptions& options);

}  // namespace salttap::daemon
