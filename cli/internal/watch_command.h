#pragma once
// `salttap watch`: the live view `salt-run state.event pretty=True` should
// have been - filtered by tag, function, minion, jid and user, printed as
// pretty text or JSON lines. With --jobs, one line per settled job, filtered
// by function, minion, jid, user and target.

#include <cstdint>
#include <cstdio>
#include <string>

#include "cli/internal/command.h"
#include "cli/internal/event_filter.h"
#include "cli/internal/job_filter.h"
#include "config/bus_location.h"
#include "config/config.h"
#include "tap/decode_limits.h"
#include "tap/event_queue.h"

namespace salttap::cli {

struct WatchOptions {
  config::BusLocation bus;
  EventFilter filter;             // events; unused with --jobs
  std::string format = "pretty";  // pretty | json
  std::uint64_t count = 0;        // stop after this many matching events (0: run until signalled)
  tap::DecodeLimits limits;
  tap::QueueLimits queue = tap::kLegacyQueueLimits;  // no journal: a burst is held in memory or dropped
  // --jobs: one line per settled job instead of events. The correlator sees
  // every event; job_filter selects the jobs printed and alerted on.
  bool jobs = false;
  JobFilter job_filter;
  std::string metrics_listen;                        // HOST:PORT for /metrics and /healthz; empty: off
  config::Config config = config::default_config();  // correlator, audit, redaction, alerts
};

int run_watch(const WatchOptions& options, std::FILE* out);

// One event as `watch` prints it (newline included).
void format_event(std::string& out, const tap::Event& event, const std::string& format);

// Registers `watch` on `app`; --config goes to `config_path`.
Command add_watch_command(CLI::App& app, std::string& config_path);

}  // namespace salttap::cli
