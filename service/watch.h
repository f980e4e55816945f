#pragma once
// `salttap watch`: the live view `salt-run state.event pretty=True` should
// have been - filtered by tag, function, minion, jid and user, printed as
// pretty text or JSON lines.

#include <cstdint>
#include <cstdio>
#include <string>

#include "service/bus_options.h"
#include "service/config.h"
#include "service/event_filter.h"
#include "tap/decode_limits.h"
#include "tap/event_queue.h"

namespace salttap::service {

struct WatchOptions {
  BusOptions bus;
  EventFilter filter;
  std::string format = "pretty";  // pretty | json
  std::uint64_t count = 0;        // stop after this many matching events (0: run until signalled)
  tap::DecodeLimits limits;
  tap::QueueLimits queue;
  // --jobs: one line per settled job instead of events (filters then apply to
  // the events the correlator sees: keep them empty to see every job).
  bool jobs = false;
  std::string metrics_listen;  // HOST:PORT for /metrics and /healthz; empty: off
  Config config = default_config();  // correlator, audit, redaction, alerts
};

int run_watch(const WatchOptions& options, std::FILE* out);

// One event as `watch` prints it (newline included).
void format_event(std::string& out, const tap::Event& event, const std::string& format);

}  // namespace salttap::service
