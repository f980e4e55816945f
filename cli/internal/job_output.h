#pragma once
// How `replay --output jobs` and `watch --jobs` print settled jobs.

#include <string>

#include "correlator/job.h"
#include "correlator/minion_registry.h"

namespace salttap::cli {

// One line for an operator: when, jid, who, what, targets, and who
// succeeded / failed / is missing (lists capped at `cap` names).
void append_job_line(std::string& out, const correlator::Job& job, const correlator::MinionRegistry& minions,
                     std::size_t cap = 20);

}  // namespace salttap::cli
