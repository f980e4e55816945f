#include "fleet/fleet_metrics.h"

namespace salttap::fleet {

void publish_fleet_metrics(Metrics& m, FleetKeeper& keeper) {
  using enum MetricId;
  const FleetTracker& t = keeper.tracker();
  const FleetCounts& c = t.counts();
  for (std::size_t i = 0; i < kLivenessStates; ++i)
    m.gauge(fleet_minions, {to_string(static_cast<Liveness>(i))}, static_cast<double>(c.liveness[i]));
  m.counter(fleet_episodes, {"minion_silent", "opened"}, c.episodes_opened);
  m.counter(fleet_episodes, {"minion_silent", "closed"}, c.episodes_closed);
  m.counter(fleet_episodes, {"highstate_stale", "opened"}, c.stale_opened);
  m.counter(fleet_episodes, {"highstate_stale", "closed"}, c.stale_closed);
  for (std::size_t i = 0; i < kFreshnessStates; ++i)
    m.gauge(fleet_highstate_minions, {to_string(static_cast<Freshness>(i))}, static_cast<double>(c.freshness[i]));
  m.gauge(fleet_blind, t.blind() ? 1 : 0);
  m.gauge(fleet_last_sweep_timestamp_seconds, static_cast<double>(c.last_sweep) / kMicrosPerSecond);
  m.counter(fleet_state_errors, keeper.stats().state_errors);
  keeper.minion_metrics().publish(m, t);
}

}  // namespace salttap::fleet
