#pragma once
// `salttap fleet`: the fleet as the running `salttap run` last saved it (its
// fleet state file, written after every sweep that changed something):
// counts by liveness and by last highstate result, then the silent minions,
// longest silent first (--highstate: every minion's highstate freshness and
// last highstate instead; --highstate stale|never|fresh: only those).
// --format json prints the same as one JSON object. Exit codes:
// docs/commands.md (0; 1 when the state file cannot be read).

#include <cstdio>
#include <optional>
#include <string>

#include "cli/internal/command.h"
#include "cli/internal/history_output.h"
#include "fleet/fleet_tracker.h"

namespace salttap::cli {

// Prints `snapshot` (saved by `run`) as of `now`; `highstates`: the highstate
// table, of the minions of freshness `only` when given.
void print_fleet(const fleet::FleetSnapshot& snapshot, Micros now, const HistoryOutput& output, std::FILE* out,
                 bool highstates = false, std::optional<fleet::Freshness> only = std::nullopt);

// Registers `fleet` on `app`; --config goes to `config_path`.
Command add_fleet_command(CLI::App& app, std::string& config_path);

}  // namespace salttap::cli
