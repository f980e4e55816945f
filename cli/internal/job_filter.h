#pragma once
// Filters for `salttap watch --jobs`: they select settled jobs, not the events
// a job is built from (its `new` event names no minion, its returns no
// target: filtering those would tear jobs apart). Same rules as EventFilter:
// each option is repeatable (any value matches), different options combine
// (all must match), values are shell globs.

#include <string>
#include <vector>

#include "correlator/job.h"
#include "correlator/minion_registry.h"

namespace salttap::cli {

struct JobFilter {
  std::vector<std::string> funs;     // the job's function; any of a multi-function job's
  std::vector<std::string> minions;  // a minion the job expected, or one that returned
  std::vector<std::string> jids;     // the jid
  std::vector<std::string> users;    // who published it
  std::vector<std::string> tgts;     // the target as published; any entry of a list target

  bool empty() const { return funs.empty() && minions.empty() && jids.empty() && users.empty() && tgts.empty(); }
  [[nodiscard]] bool matches(const correlator::Job& job, const correlator::MinionRegistry& registry) const;
};

}  // namespace salttap::cli
