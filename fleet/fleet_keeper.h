#pragma once
// FleetKeeper: the fleet tracker with what `run` does around it on the
// pipeline thread, between two batches: the blind clock told whether the
// bus is heard, the accepted keys read (at start, after a salt/key event, on
// a reload, every keys_rescan), the sweep every sweep_seconds, and the state
// file written after a sweep that changed something, and at shutdown.
//
// The state file is written whole or not at all (common/atomic_file.h). One
// that cannot be read or is not what salttap wrote is set aside with a WARN
// and counted; the fleet then starts empty, each minion with a full window.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "common/atomic_file.h"
#include "common/clock.h"
#include "fleet/fleet_tracker.h"
#include "fleet/minion_metrics.h"

namespace salttap::fleet {

struct KeeperStats {
  std::uint64_t state_writes = 0;
  std::uint64_t state_errors = 0;  // a state file unreadable or refused, or a write that failed
};

class FleetKeeper {
 public:
  FleetKeeper(FleetConfig config, std::filesystem::path keys_dir, std::filesystem::path state_path,
              std::string master_id, const Clock& clock);

  FleetTracker& tracker() { return *tracker_; }
  const FleetTracker& tracker() const { return *tracker_; }
  // Every batch. What the sweep decided, if it ran.
  SweepOutcome tick(bool hearing);
  // SIGHUP: the new rules; the keys are read again and the next tick sweeps.
  void reconfigure(FleetConfig config, std::filesystem::path keys_dir);
  void write_state();
  const KeeperStats& stats() const { return stats_; }
  // The per-minion gauges' publisher, kept for its buffers (minion_metrics.h).
  MinionMetricsExporter& minion_metrics() { return minion_metrics_; }
  const std::filesystem::path& state_path() const { return state_.path(); }

 private:
  std::optional<FleetSnapshot> read_state();
  void read_keys(Micros now, SweepOutcome& out);

  const Clock& clock_;
  std::filesystem::path keys_dir_;
  AtomicFile state_;
  std::unique_ptr<FleetTracker> tracker_;
  KeeperStats stats_;
  MinionMetricsExporter minion_metrics_;
  Micros next_sweep_ = 0;
  Micros next_keys_ = 0;
  Micros last_write_ = 0;
  bool keys_warned_ = false;
  std::uint64_t written_revision_ = 0;
};

}  // namespace salttap::fleet
