#pragma once
// A point in time as a person gives it on a command line or in a query
// string (--since, --until, the job browser's filters), relative to now.

#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace salttap {

// A bound relative to `now`:
//   a duration before now: "90s", "15m", "2h", "7d", "1w", or several, "1h30m"
//   a UTC date or time: "2026-11-29", "2026-11-29T19:04", "2026-11-29T19:04:50[.452295]"
//   with "Z" or "+HH:MM" / "-HH:MM" (a space may stand for the "T")
// nullopt and `error` saying what was expected otherwise.
[[nodiscard]] std::optional<Micros> parse_time_bound(std::string_view text, Micros now, std::string& error);

}  // namespace salttap
