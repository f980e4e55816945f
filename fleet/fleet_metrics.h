#pragma once
// The fleet on /metrics: minions by liveness and by highstate freshness
// (bounded: four states each), episodes opened and closed, whether salttap
// is blind, the last sweep, state file errors; and, opted in, the capped
// per-minion gauges (minion_metrics.h).

#include "common/metrics.h"
#include "fleet/fleet_keeper.h"

namespace salttap::fleet {

void publish_fleet_metrics(Metrics& metrics, FleetKeeper& keeper);

}  // namespace salttap::fleet
