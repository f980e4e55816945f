#pragma once
// `fleet:` - which minions are watched for silence, and how long each may stay
// quiet (docs/fleet.md). Rules are shell globs on the minion id; the first
// that matches decides.
//
//   fleet:
//     enabled: true
//     silence:                          default: [{match: "*", after_seconds: 3600}]
//       - {match: "laptop-*", ignore: true}
//       - {match: "db*", after_seconds: 900}
//     sweep_seconds: 30
//     forget_after_seconds: 604800      the heard-fleet window when the keys cannot be read
//     keys_rescan_seconds: 300
//     keys_dir: ""                      default: <pki_dir>/minions of the master
//     count_presence: true              presence lists count as signs of life
//     storm: {min_minions: 20, min_fraction: 0.10}
//     state_path: ""                    default: fleet.state beside the checkpoint
//     index_interval_seconds: 300       a minion's entity document refreshes last_heard at most this often
//     highstate:                        default: [] (no minion watched)
//       - {match: "web*", stale_after_seconds: 7200}
//       - {match: "*", stale_after_seconds: null}   null: not watched
//     highstate_alert_never: false      a minion never successful is stale one window after joining
//     minion_metrics:                   per-minion gauges on /metrics (minion_metrics.h)
//       enabled: false
//       match: ["*"]
//       exclude: []
//       max_minions: 1000
//       metrics: [last_heard, last_highstate_success, last_highstate_failed_states]

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/clock.h"
#include "common/glob_list.h"

namespace salttap::fleet {

struct SilenceRule {
  std::string match;
  bool ignore = false;
  Micros after = 3600 * kMicrosPerSecond;
};

// One sweep opening at least max(min_minions, min_fraction x fleet) episodes
// is a storm: one fleet alert instead of one per minion.
struct StormConfig {
  std::size_t min_minions = 20;
  double min_fraction = 0.10;
  std::size_t threshold(std::size_t fleet_size) const;
};

// A minion is stale when its last successful enforcing full highstate is
// older than stale_after (blind time not counted); 0: not watched.
struct HighstateRule {
  std::string match;
  Micros stale_after = 0;
};

// The per-minion gauges, opt-in and capped (minion_metrics.h).
enum class MinionMetric : std::uint8_t { last_heard, last_highstate_success, last_highstate_failed_states };
inline constexpr std::size_t kMinionMetrics = 3;
std::string_view to_string(MinionMetric metric);

struct MinionMetricsConfig {
  bool enabled = false;
  GlobList match{{"*"}};
  GlobList exclude;
  std::size_t max_minions = 1000;
  std::array<bool, kMinionMetrics> metrics{true, true, true};
};

struct FleetConfig {
  bool enabled = true;
  std::vector<SilenceRule> silence{SilenceRule{"*", false, 3600 * kMicrosPerSecond}};
  Micros sweep = 30 * kMicrosPerSecond;
  Micros forget_after = Micros{7} * 86400 * kMicrosPerSecond;
  Micros keys_rescan = 300 * kMicrosPerSecond;
  std::filesystem::path keys_dir;  // empty: <pki_dir>/minions (config::fleet_keys_dir)
  bool count_presence = true;
  StormConfig storm;
  std::filesystem::path state_path;  // empty: config::fleet_state_path picks it
  // A change of last_heard alone rewrites a minion's entity document at
  // most this often; every other change (connected, key, episode,
  // highstate) at the next sweep.
  Micros index_interval = 300 * kMicrosPerSecond;

  std::vector<HighstateRule> highstate;  // first match wins; none: not watched
  bool highstate_alert_never = false;
  MinionMetricsConfig minion_metrics;

  // The first rule whose glob matches `minion`, or -1 when none does (not watched).
  int rule_for(std::string_view minion) const;
  // The first highstate rule matching `minion`, or -1.
  int highstate_rule_for(std::string_view minion) const;
};

// Throws ConfigError naming `where` and the key.
FleetConfig parse_fleet_config(const YAML::Node& node, const std::string& where = "fleet");

}  // namespace salttap::fleet
