#pragma once
// Correlator settings. Defaults suit real fleets; every key is documented in
// docs/configuration.md ("correlator").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"

namespace salttap::correlator {

// A minion is missing when its job's deadline passes without its return.
// First matching function glob wins.
struct DeadlineRule {
  std::string fun;  // glob on the job's function
  Micros after;     // after the job's start
};

std::vector<DeadlineRule> default_deadlines();

struct CorrelatorConfig {
  std::vector<DeadlineRule> deadlines = default_deadlines();
  std::optional<Micros> missing_after;           // overrides every deadline (--missing-after)
  Micros orphan_settle = 10 * kMicrosPerSecond;  // a job without `new` settles this long after its last return
  Micros late_grace = 3600 * kMicrosPerSecond;   // settled jobs are kept this long for late returns
  std::size_t max_jobs = 100'000;                // tracked at once; the oldest are evicted (counted)
  // Bytes the tracked jobs may hold (Correlator::jobs_bytes()); past it the
  // oldest settled jobs leave first, then the oldest open ones (counted, alerted).
  std::size_t memory_budget = std::size_t{64} << 20;
  // false: settled jobs wait whole, as before SettledJob (not a config key:
  // the reference the tests compare the compact form with).
  bool compact_settled = true;
  std::vector<std::string> noise_funs = {"saltutil.find_job", "saltutil.running"};  // tracked, never reported
  std::size_t max_failed_states = 50;                                               // per job, in summaries
  std::size_t max_failures = 100;  // failed minions with reasons, per job
  // A master of masters (the master config's `order_masters`): a list
  // target's minions without a key here are not failed at once, they may
  // answer through a syndic; they are pending until the deadline.
  bool order_masters = false;

  Micros deadline_for(const std::string& fun) const;
};

}  // namespace salttap::correlator
