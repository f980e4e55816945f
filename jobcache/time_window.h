#pragma once
// Which jobs a backfill reads, by the time in their jid (the master's clock
// when it published; docs/salt-event-bus.md §7.1): `--since` / `--until`.
// A jid without a time (passed by the caller) is placed at its `jid` file's
// modification time instead.

#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace salttap::jobcache {

struct TimeWindow {
  std::optional<Micros> since;  // inclusive
  std::optional<Micros> until;  // exclusive
  bool contains(Micros t) const { return (!since || t >= *since) && (!until || t < *until); }
};

// A bound as given on the command line, relative to `now`:
//   a duration before now: "90s", "15m", "2h", "7d", "1w", or several, "1h30m"
//   a UTC date or time: "2026-11-29", "2026-11-29T19:04", "2026-11-29T19:04:50[.452295]"
//   with "Z" or "+HH:MM" / "-HH:MM" (a space may stand for the "T")
// nullopt and `error` saying what was expected otherwise.
[[nodiscard]] std::optional<Micros> parse_time_bound(std::string_view text, Micros now, std::string& error);

}  // namespace salttap::jobcache
