#pragma once
// The fleet state file: the minion table as JSON, so a restart keeps when
// every minion was last heard, its open episode, and the blind clock (the
// time between the save and the next connection to the bus is blind).
//
//   {"format": "salttap-fleet", "version": 1, "saved_at": µs, "blind_total": µs,
//    "keys_known": bool,
//    "minions": [{"id", "last_heard", "blind_at_heard", "via", "last_connected",
//                 "blind_at_connected", "connected", "expected", "expected_since",
//                 "blind_at_expected", "silent_since", "detected_at", "window",
//                 "liveness", "last_highstate", "last_successful_highstate",
//                 "indexed_version", "blind_at_success", "enforced_at",
//                 "enforced_failed_states", "watched_since", "blind_at_watched",
//                 "stale_since", "stale_detected_at", "stale_window", "freshness"}, ...]}
//   a highstate: {"at": µs, "jid", "succeeded": bool, "test": bool}
//
// Version 2 added the highstates, version 3 the highstate freshness (the
// stale episode, the last enforcing run's failed states). Older files are
// still read: version 1 knows no highstate; versions 1 and 2 know no
// freshness (the blind total at the last success is taken as the one saved,
// so only blind time since the save is not counted, and a never successful
// minion's first window starts at the next sweep), so an upgrade keeps every
// minion's clocks.
//
// The reader checks every field (types, ranges, names) and refuses the whole
// file with the first thing wrong: a state file is ours, and one that is not
// what we wrote is not half-trusted.

#include <string>
#include <string_view>

#include "common/result.h"
#include "fleet/fleet_tracker.h"

namespace salttap::fleet {

inline constexpr std::size_t kMaxFleetStateBytes = std::size_t{256} << 20;

std::string encode_fleet_state(const FleetSnapshot& snapshot);
// The snapshot, or why the text is not a fleet state file.
[[nodiscard]] Result<FleetSnapshot, std::string> decode_fleet_state(std::string_view text);

}  // namespace salttap::fleet
