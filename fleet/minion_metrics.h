#pragma once
// The opt-in per-minion gauges (fleet.minion_metrics): for each minion of
// the expected fleet that matches, when it was last heard, its last
// successful enforcing full highstate (0: never) and the failed states of
// its last enforcing one; the only label is `minion`. Bounded: at most
// max_minions minions, the most interesting first (silent, then stale, then
// failing, then by name), and salttap_minion_metrics_truncated with
// salttap_minion_metrics_minions{set} say what was left out. A minion whose
// key is deleted or that is forgotten drops out of the expected fleet, and
// its series from the next scrape.
//
// Rendered once per sweep, not per scrape: the lines go into buffers kept
// from one sweep to the next and are copied into Metrics (Metrics::samples),
// so a scrape appends them whole and a steady fleet allocates nothing.

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "fleet/fleet_tracker.h"

namespace salttap::fleet {

struct MinionMetricsCounts {
  std::size_t exported = 0;
  std::size_t dropped = 0;  // matching, over max_minions
};

class MinionMetricsExporter {
 public:
  // Publishes the gauges as of the tracker's last sweep; does nothing when
  // that sweep was published already. Off: the families are removed.
  void publish(Metrics& metrics, const FleetTracker& tracker);
  const MinionMetricsCounts& counts() const { return counts_; }

 private:
  struct Candidate {
    int rank;  // 0 silent, 1 stale, 2 failing, 3 the rest
    const std::string* name;
    const MinionEntity* entity;
  };
  std::vector<Candidate> candidates_;
  std::array<std::string, kMinionMetrics> lines_;
  MinionMetricsCounts counts_;
  Micros published_sweep_ = -1;
  bool published_ = false;
};

}  // namespace salttap::fleet
