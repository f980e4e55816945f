#include "cli/internal/job_filter.h"

#include <algorithm>
#include <string_view>

#include "cli/internal/event_filter.h"

namespace salttap::cli {
namespace {

// The correlator keeps a list value (multi-function jobs, list targets) comma-joined.
bool any_entry_matches(const std::vector<std::string>& globs, std::string_view joined) {
  for (std::size_t start = 0; start <= joined.size();) {
    const std::size_t end = std::min(joined.find(',', start), joined.size());
    if (any_glob_match(globs, joined.substr(start, end - start))) return true;
    start = end + 1;
  }
  return false;
}

bool minion_matches(const std::vector<std::string>& globs, const correlator::Job& job,
                    const correlator::MinionRegistry& registry) {
  for (std::size_t i = 0; i < job.minions.size(); ++i) {
    const std::uint8_t outcome = job.flags[i] & correlator::kOutcomeMask;
    const bool returned = outcome == correlator::kSucceeded || outcome == correlator::kFailed;
    if (((job.flags[i] & correlator::kExpected) || returned) && any_glob_match(globs, registry.name(job.minions[i])))
      return true;
  }
  return false;
}

}  // namespace

bool JobFilter::matches(const correlator::Job& job, const correlator::MinionRegistry& registry) const {
  if (!funs.empty() && !any_entry_matches(funs, job.fun)) return false;
  if (!minions.empty() && !minion_matches(minions, job, registry)) return false;
  if (!jids.empty() && !any_glob_match(jids, job.jid)) return false;
  if (!users.empty() && !any_glob_match(users, job.user)) return false;
  if (!tgts.empty() && !any_glob_match(tgts, job.tgt) && !(job.tgt_type == "list" && any_entry_matches(tgts, job.tgt)))
    return false;
  return true;
}

}  // namespace salttap::cli
