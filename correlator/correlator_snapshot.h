#pragma once
// CorrelatorSnapshot: the correlator's open jobs as plain data, so a writer
// elsewhere can persist them across a restart (recovery/checkpoint_file.h) and
// a restarted correlator can settle them exactly as if it had never stopped.
//
// Every tracked job is in it: the ones still waiting for returns and the
// settled ones still inside their late-return window. Their MinionIds index
// `minions` (the registry's names in id order, so a fresh correlator interns
// them back to the same ids). `next_check` is each job's one live timer.

#include <string>
#include <vector>

#include "correlator/job.h"

namespace salttap::correlator {

struct CorrelatorSnapshot {
  std::vector<std::string> minions;  // MinionId -> name
  std::vector<Job> jobs;             // in opening order
};

}  // namespace salttap::correlator
