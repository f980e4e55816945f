#pragma once
// The job summary as JSON: what `salttap replay --output jobs` prints, and
// the job document the indexer will ship. Field reference in docs/jobs.md.

#include <string>

#include "correlator/job.h"
#include "correlator/minion_registry.h"

namespace salttap::correlator {

struct JobJsonOptions {
  std::size_t list_cap = 1000;  // minion names per list; counts are always exact
};

void append_job_json(std::string& out, const Job& job, const MinionRegistry& minions,
                     const JobJsonOptions& options = {});

}  // namespace salttap::correlator
