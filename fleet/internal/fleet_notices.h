#pragma once
// The alerts of silence episodes, as the alert outlets carry them. Each
// episode is one document in the alerts index, `<master>/minion_silent/
// <minion>/<since µs>`: version 1 when it opens, 2 when it closes, so a
// restart or a twin salttap rewrites it instead of adding another.

#include <string>
#include <string_view>
#include <vector>

#include "correlator/alert.h"
#include "fleet/minion_entity.h"

namespace salttap::fleet {

struct EpisodeFacts {
  std::string_view master;
  std::string_view minion;
  std::string_view rule;  // the glob of the rule that opened it
  const MinionEntity& entity;
};

// Silence episodes (minion_silent). Sent to every outlet when an episode opens.
correlator::Alert minion_silent_alert(const EpisodeFacts& facts);
// Sent when the minion is heard again: resolution "heard".
correlator::Alert minion_recovered_alert(const EpisodeFacts& facts, Micros resolved_at);
// The closed episode's document alone (key_deleted, rule_changed): no notice.
correlator::Alert closed_episode_record(const EpisodeFacts& facts, Micros resolved_at, std::string_view resolution);
// Stale-highstate episodes, `<master>/highstate_stale/<minion>/<since µs>`,
// the same way: opened (highstate_stale), closed by a successful enforcing
// highstate (highstate_fresh, resolution highstate_ok), or closed without a
// notice (key_deleted, rule_changed, forgotten).
correlator::Alert highstate_stale_alert(const EpisodeFacts& facts);
correlator::Alert highstate_fresh_alert(const EpisodeFacts& facts, Micros resolved_at);
correlator::Alert closed_stale_record(const EpisodeFacts& facts, Micros resolved_at, std::string_view resolution);
// One sweep opened (or closed) a storm of episodes: one alert naming them
// (capped at `list_cap`), instead of one per minion.
correlator::Alert fleet_storm_alert(correlator::AlertKind kind, std::string_view master,
                                    const std::vector<std::string>& minions, Micros oldest_since, Micros now,
                                    std::size_t list_cap);

}  // namespace salttap::fleet
