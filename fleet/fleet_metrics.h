#pragma once
// The fleet on /metrics: minions by liveness (bounded: four states, never a
// label per minion), episodes opened and closed, whether salttap is blind,
// the last sweep, state file errors.

#include "common/metrics.h"
#include "fleet/fleet_keeper.h"

namespace salttap::fleet {

void publish_fleet_metrics(Metrics& metrics, const FleetKeeper& keeper);

}  // namespace salttap::fleet
