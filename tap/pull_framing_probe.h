#pragma once
// Finds the framing master_event_pull.ipc expects (docs/salt-event-bus.md §5.3):
// the pub stream settles it for 3006.26+ (len32 on both sides); otherwise a
// probe event `salttap/probe/<random>` is fired unprefixed first (a wrong
// unprefixed write to a prefixed server is dropped harmlessly when the
// connection closes) and, if it does not appear on the pub socket in time,
// prefixed on a new connection.

#include <chrono>

#include "common/steady_time.h"
#include "tap/decode_limits.h"
#include "tap/endpoint.h"
#include "tap/framing.h"

namespace salttap::tap {

struct ProbeOptions {
  Endpoint pub;
  Endpoint pull;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds wait_per_try{2000};
  SteadyTime* steady_time = nullptr;  // both timeouts run on it; nullptr: real time
};

// Returns Framing::unknown when neither framing got through.
Framing probe_pull_framing(const ProbeOptions& options);

}  // namespace salttap::tap
