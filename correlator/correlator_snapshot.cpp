#include "correlator/correlator_snapshot.h"

#include <algorithm>
#include <numeric>

#include "correlator/correlator.h"

namespace salttap::correlator {

CorrelatorSnapshot Correlator::snapshot() const {
  CorrelatorSnapshot s;
  s.minions.reserve(minions_.size());
  for (MinionId id = 0; id < minions_.size(); ++id) s.minions.push_back(minions_.name(id));
  s.jobs.reserve(order_.size());
  for (const auto& [seq, jid] : order_) s.jobs.push_back(*jobs_.find(absl::string_view(jid))->second);
  return s;
}

namespace {

// The snapshot's minion ids, renamed to this registry's; the minion list is
// sorted again when the two differ (restoring beside jobs already tracked).
Job remapped(const Job& saved, const std::vector<MinionId>& to) {
  Job job = saved;
  const auto map = [&](MinionId m) { return m < to.size() ? to[m] : m; };
  for (auto& m : job.minions) m = map(m);
  for (auto& [m, until] : job.extended) m = map(m);
  for (auto& [m, state] : job.failed_states) m = map(m);
  for (auto& [m, why] : job.failures) m = map(m);
  if (!std::is_sorted(job.minions.begin(), job.minions.end())) {
    std::vector<std::size_t> order(job.minions.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return job.minions[a] < job.minions[b]; });
    std::vector<MinionId> minions;
    std::vector<std::uint8_t> flags;
    for (std::size_t i : order) {
      minions.push_back(job.minions[i]);
      flags.push_back(job.flags[i]);
    }
    job.minions = std::move(minions);
    job.flags = std::move(flags);
  }
  return job;
}

}  // namespace

std::size_t Correlator::restore(const CorrelatorSnapshot& snapshot) {
  std::vector<MinionId> ids;
  ids.reserve(snapshot.minions.size());
  for (const auto& name : snapshot.minions) ids.push_back(minions_.intern(name));
  std::size_t restored = 0;
  for (const Job& saved : snapshot.jobs) {
    auto [it, inserted] = jobs_.try_emplace(saved.jid);
    if (!inserted) continue;  // seen live already: what this run knows wins
    it->second = std::make_unique<Job>(remapped(saved, ids));
    Job& job = *it->second;
    job.open_seq = next_seq_++;
    order_.emplace(job.open_seq, job.jid);
    schedule(job, job.next_check);
    ++restored;
  }
  ++revision_;
  return restored;
}

}  // namespace salttap::correlator
