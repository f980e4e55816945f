#pragma once
// Which jobs a backfill reads, by the time in their jid (the master's clock
// when it published; docs/salt-event-bus.md §7.1): `--since` / `--until`
// (common/time_bound.h reads them).
// A jid without a time (passed by the caller) is placed at its `jid` file's
// modification time instead.

#include <optional>

#include "common/clock.h"

namespace salttap::jobcache {

struct TimeWindow {
  std::optional<Micros> since;  // inclusive
  std::optional<Micros> until;  // exclusive
  bool contains(Micros t) const { return (!since || t >= *since) && (!until || t < *until); }
};

}  // namespace salttap::jobcache
