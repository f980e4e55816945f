#pragma once
// The tap's metrics, in one place (names in docs/operations.md, "Metrics").

#include "common/metrics.h"
#include "tap/event_queue.h"
#include "tap/tap_stats.h"

namespace salttap::tap {

void publish_tap_metrics(Metrics& m, const TapStats& s, const QueueStats& q);

}  // namespace salttap::tap
