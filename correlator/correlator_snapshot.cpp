#include "correlator/correlator_snapshot.h"

#include <algorithm>
#include <numeric>

#include <absl/container/flat_hash_set.h>

#include "correlator/correlator.h"

namespace salttap::correlator {

CorrelatorSnapshot Correlator::snapshot() const {
  CorrelatorSnapshot s;
  s.minions.reserve(minions_.size());
  for (MinionId id = 0; id < minions_.size(); ++id) s.minions.push_back(minions_.name(id));
  s.jobs.reserve(order_.size());
  for (const auto& [seq, jid] : order_) s.jobs.push_back(*jobs_.find(absl::string_view(jid))->second);
  // Settled jobs in settling order, each shared load and detail once.
  s.loads.emplace_back();
  s.details.emplace_back();
  absl::flat_hash_map<std::uint32_t, std::uint32_t> load_at, detail_at;
  absl::flat_hash_set<JidKey> taken;
  s.settled.reserve(settled_.size());
  // Places in the opening order of all the jobs, whole and settled.
  std::vector<std::uint64_t> seqs;
  seqs.reserve(order_.size() + settled_.size());
  for (const auto& [seq, jid] : order_) seqs.push_back(seq);
  for (const auto& [key, job] : settled_) seqs.push_back(std::uint64_t{job.open_seq});
  std::sort(seqs.begin(), seqs.end());
  for (const auto& [at, key] : grace_queue_) {
    const auto it = settled_.find(key);
    if (it == settled_.end() || it->second.grace_end != at || !taken.insert(key).second) continue;
    SettledEntry e{key.text(), it->second};
    e.job.open_seq =
        static_cast<std::uint64_t>(std::lower_bound(seqs.begin(), seqs.end(), e.job.open_seq) - seqs.begin());
    if (auto [slot, fresh] = load_at.try_emplace(e.job.load, static_cast<std::uint32_t>(s.loads.size())); fresh)
      s.loads.push_back(loads_.get(e.job.load));
    e.job.load = load_at[e.job.load];
    if (e.job.detail != DetailPool::kNone) {
      if (auto [slot, fresh] = detail_at.try_emplace(e.job.detail, static_cast<std::uint32_t>(s.details.size())); fresh)
        s.details.push_back(details_.get(e.job.detail));
      e.job.detail = detail_at[e.job.detail];
    }
    s.settled.push_back(std::move(e));
  }
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

JobDetail remapped(const JobDetail& saved, const std::vector<MinionId>& to) {
  JobDetail detail = saved;
  const auto map = [&](MinionId m) { return m < to.size() ? to[m] : m; };
  for (auto& [m, state] : detail.failed_states) m = map(m);
  for (auto& [m, why] : detail.failures) m = map(m);
  return detail;
}

PackedMinions remapped(const PackedMinions& saved, const std::vector<MinionId>& to) {
  std::vector<std::uint32_t> packed;
  packed.reserve(saved.size());
  for (const std::uint32_t p : saved.values()) {
    const MinionId m = PackedMinions::id(p);
    packed.push_back(PackedMinions::pack(m < to.size() ? to[m] : m, PackedMinions::flags(p)));
  }
  std::sort(packed.begin(), packed.end());  // by id: the id is in the high bits
  return PackedMinions(packed);
}

}  // namespace

std::size_t Correlator::restore(const CorrelatorSnapshot& snapshot) {
  std::vector<MinionId> ids;
  ids.reserve(snapshot.minions.size());
  for (const auto& name : snapshot.minions) ids.push_back(minions_.intern(name));
  std::size_t restored = 0;
  const auto tracked = [&](std::string_view jid) {
    const auto key = JidKey::of(jid);
    return find_whole(jid) != nullptr || (key && settled_.contains(*key));
  };
  // The snapshot's opening order: settled jobs name their place, whole ones
  // take the others in turn (a place named twice or out of range: at the end).
  const std::uint64_t base = next_seq_;
  const std::size_t places = snapshot.size();
  std::vector<bool> named(places, false);
  std::vector<std::uint64_t> settled_seq;
  settled_seq.reserve(snapshot.settled.size());
  for (const SettledEntry& saved : snapshot.settled) {
    const std::uint64_t place = saved.job.open_seq;
    const bool ok = place < places && !named[place];
    if (ok) named[place] = true;
    settled_seq.push_back(ok ? base + place : base + places + settled_seq.size());
  }
  std::size_t free_place = 0;
  for (const Job& saved : snapshot.jobs) {
    while (free_place < places && named[free_place]) ++free_place;
    const std::uint64_t seq = base + free_place++;
    if (tracked(saved.jid)) continue;  // seen live already: what this run knows wins
    auto whole = std::make_unique<Job>(remapped(saved, ids));
    Job& job = *whole;
    jobs_.emplace(job.jid, std::move(whole));
    job.open_seq = seq;
    order_.emplace(job.open_seq, job.jid);
    account(job);
    if (job.settled)
      park(job, /*queued=*/false);  // compact, when it fits (a checkpoint of an older build held it whole)
    else
      schedule(job, job.next_check);
    ++restored;
  }
  // Each shared load and detail is taken in once, then shared.
  std::vector<LoadPool::Ref> load_refs(snapshot.loads.size(), LoadPool::kNone);
  std::vector<DetailPool::Ref> detail_refs(snapshot.details.size(), DetailPool::kNone);
  for (std::size_t i = 0; i < snapshot.settled.size(); ++i) {
    const SettledEntry& saved = snapshot.settled[i];
    const auto key = JidKey::of(saved.jid);
    if (!key || tracked(saved.jid) || saved.job.load >= snapshot.loads.size() ||
        saved.job.detail >= snapshot.details.size())
      continue;
    SettledJob job = saved.job;
    job.minions = remapped(saved.job.minions, ids);
    LoadPool::Ref& load = load_refs[saved.job.load];
    job.load =
        load == LoadPool::kNone ? (load = loads_.intern(JobLoad(snapshot.loads[saved.job.load]))) : loads_.share(load);
    if (saved.job.detail != DetailPool::kNone) {
      DetailPool::Ref& detail = detail_refs[saved.job.detail];
      job.detail = detail == DetailPool::kNone
                       ? (detail = details_.intern(remapped(snapshot.details[saved.job.detail], ids)))
                       : details_.share(detail);
    }
    job.open_seq = settled_seq[i];
    settled_heap_bytes_ += job.minions.heap_bytes();
    grace_queue_.emplace_back(job.grace_end, *key);
    settled_.emplace(*key, std::move(job));
    ++restored;
  }
  next_seq_ = base + places + snapshot.settled.size();
  ++revision_;
  return restored;
}

}  // namespace salttap::correlator
