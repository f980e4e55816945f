#pragma once
// fleet/: the minions as a fleet. A transform beside the correlator: it
// takes every event (from the pipeline thread) and the master's accepted
// keys, and keeps one MinionEntity per minion: when it was last heard and
// how, whether the master has it connected, whether it belongs to the
// expected fleet, and its last full highstate (and last successful
// enforcing one, correlator/run_kind.h). A sweep, every fleet.sweep_seconds, decides which
// expected minions have been silent longer than their rule's window and
// opens one episode each (one minion_silent alert), closes it when the
// minion speaks again (one minion_recovered), and groups a storm into one
// alert. Silence is counted only while salttap hears the bus (blind_clock.h),
// so no outage of salttap, the master or the pipeline opens an episode.
//
// Expected fleet: the accepted keys when they can be read (set_keys), else
// every minion heard within forget_after. A key deleted closes the
// minion's episode with resolution key_deleted and no recovery alert; a
// config reload that no longer calls a minion silent closes it with
// rule_changed, also without one.
//
// Highstate freshness (fleet.highstate): a watched minion whose last
// successful enforcing full highstate is older than its rule's window (on
// the same blind-corrected clock) is stale: one highstate_stale episode,
// closed by the next successful enforcing full highstate (highstate_fresh,
// resolution highstate_ok), never by a failing, dry or partial run. No
// episode opens while the minion is silent (its silence says more).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "common/clock.h"
#include "correlator/alert.h"
#include "fleet/blind_clock.h"
#include "fleet/entity_document.h"
#include "fleet/fleet_config.h"
#include "fleet/minion_entity.h"
#include "tap/event.h"

namespace salttap::fleet {

// What a sweep decided: alerts for every outlet, and episode documents for
// the alerts index alone (episodes closed without a notice, storm members).
struct SweepOutcome {
  std::vector<correlator::Alert> notices;
  std::vector<correlator::Alert> records;
  std::vector<EntityDoc> entities;  // for the <prefix>-minions index
};

struct FleetCounts {
  std::array<std::uint64_t, kLivenessStates> liveness{};    // expected minions by liveness, as of the last sweep
  std::array<std::uint64_t, kFreshnessStates> freshness{};  // expected minions by highstate freshness
  std::uint64_t episodes_opened = 0;                        // minion_silent
  std::uint64_t episodes_closed = 0;
  std::uint64_t stale_opened = 0;  // highstate_stale
  std::uint64_t stale_closed = 0;
  Micros last_sweep = 0;
};

// The table as a state file keeps it (fleet_state_format.h).
struct FleetSnapshot {
  Micros saved_at = 0;
  Micros blind_total = 0;
  bool keys_known = false;
  std::vector<std::pair<std::string, MinionEntity>> minions;  // sorted by name
};

class FleetTracker {
 public:
  // Starts blind from `blind_since` (the start, or the previous run's last
  // save) with `blind_total` accumulated before.
  FleetTracker(FleetConfig config, std::string master_id, Micros blind_since, Micros blind_total = 0);

  // Every event the pipeline takes, with its arrival time.
  void on_event(const tap::Event& event, Micros arrival);
  // The accepted keys (nullopt: they cannot be read, the fleet is every
  // minion heard within forget_after). Keys gone close their episodes.
  SweepOutcome set_keys(const std::optional<std::vector<std::string>>& keys, Micros now);
  // A salt/key event arrived since the last call: the caller reads the keys again.
  bool take_keys_changed();
  void observe_hearing(bool hearing, Micros now) { blind_.observe(hearing, now); }
  // The rules of a reloaded config; open episodes are judged by them at the next sweep.
  void reconfigure(FleetConfig config) { config_ = std::move(config); }
  SweepOutcome sweep(Micros now);
  // The entity documents of the minions that changed since their last one
  // (last_heard alone: once index_interval has passed); after a sweep.
  void collect_entities(Micros now, std::vector<EntityDoc>& out);

  FleetSnapshot snapshot(Micros now) const;
  // Takes the saved minions in (before any event).
  void restore(const FleetSnapshot& snapshot);

  const FleetConfig& config() const { return config_; }
  const FleetCounts& counts() const { return counts_; }
  bool blind() const { return blind_.blind(); }
  bool keys_known() const { return keys_known_; }
  std::size_t size() const { return minions_.size(); }
  const MinionEntity* find(std::string_view minion) const;
  // Every minion of the table, expected now or not.
  const absl::flat_hash_map<std::string, MinionEntity>& minions() const { return minions_; }
  // In the expected fleet at `now` (the accepted keys, or heard lately).
  bool expected_now(const MinionEntity& m, Micros now) const;
  // Grows with every change a state file should keep.
  std::uint64_t revision() const { return revision_; }

 private:
  MinionEntity& entity(std::string_view minion);
  void heard(std::string_view minion, Micros at, HeardVia via);
  // A full highstate's return: the minion's last (and last successful) highstate.
  void highstate_return(std::string_view minion, std::string_view jid, const tap::Event& event, Micros at);
  void presence(const tap::Event& event, Micros at);
  void key_event(const tap::Event& event, Micros at);
  // Closes the minion's open episodes, silence and stale alike (key_deleted, forgotten).
  void close(std::string_view name, MinionEntity& m, Micros at, std::string_view resolution, SweepOutcome* out);
  void close_silence(std::string_view name, MinionEntity& m, Micros at, std::string_view resolution, SweepOutcome* out);
  void close_stale(std::string_view name, MinionEntity& m, Micros at, std::string_view resolution, SweepOutcome* out);
  // The highstate half of a sweep, after the silence half (silence inhibits).
  void sweep_highstate(Micros now, Micros blind_now, std::size_t storm, SweepOutcome& out);
  std::string_view highstate_glob(std::string_view minion) const;
  // The newest activity on the blind-corrected clock (time minus blind total then).
  Micros activity_effective(const MinionEntity& m) const;
  std::string_view rule_glob(std::string_view minion) const;
  // The minion's key is gone: its last entity document says so.
  void write_deleted(std::string_view name, MinionEntity& m, Micros at, SweepOutcome& out);

  FleetConfig config_;
  std::string master_id_;
  BlindClock blind_;
  absl::flat_hash_map<std::string, MinionEntity> minions_;
  bool keys_known_ = false;
  bool keys_changed_ = false;
  SweepOutcome pending_;  // episodes a salt/key delete closed, handed out by the next sweep
  FleetCounts counts_;
  std::uint64_t revision_ = 0;
};

}  // namespace salttap::fleet
