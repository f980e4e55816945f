#include "correlator/job.h"

#include <algorithm>

#include "common/enum_names.h"

namespace salttap::correlator {

std::string_view to_string(JobKind k) { return enumerator_name(k, "job"); }

std::string_view to_string(JobStatus s) { return enumerator_name(s, "running"); }

JobStatus Job::status() const {
  if (failed > 0 || (outcome_success && !*outcome_success)) return JobStatus::failed;  // failed wins over missing
  if (missing > 0) return JobStatus::missing;
  if (!settled) return JobStatus::running;
  if ((kind == JobKind::runner || kind == JobKind::wheel) && !outcome_success) return JobStatus::missing;
  return JobStatus::succeeded;
}

std::optional<std::size_t> Job::find(MinionId m) const {
  auto it = std::lower_bound(minions.begin(), minions.end(), m);
  if (it == minions.end() || *it != m) return std::nullopt;
  return static_cast<std::size_t>(it - minions.begin());
}

std::size_t Job::slot(MinionId m) {
  auto it = std::lower_bound(minions.begin(), minions.end(), m);
  const auto i = static_cast<std::size_t>(it - minions.begin());
  if (it == minions.end() || *it != m) {
    minions.insert(it, m);
    flags.insert(flags.begin() + static_cast<std::ptrdiff_t>(i), kPending);
    ++pending;
  }
  return i;
}

void Job::expect(const std::vector<MinionId>& ids) {
  std::vector<MinionId> merged;
  std::vector<std::uint8_t> merged_flags;
  merged.reserve(minions.size() + ids.size());
  merged_flags.reserve(minions.size() + ids.size());
  std::size_t i = 0, j = 0;
  while (i < minions.size() || j < ids.size()) {
    if (j == ids.size() || (i < minions.size() && minions[i] < ids[j])) {
      merged.push_back(minions[i]);
      merged_flags.push_back(flags[i++]);
      continue;
    }
    const bool present = i < minions.size() && minions[i] == ids[j];
    std::uint8_t f = present ? flags[i++] : std::uint8_t{kPending};
    if (!present) ++pending;
    if (!(f & kExpected)) ++expected;
    merged.push_back(ids[j++]);
    merged_flags.push_back(static_cast<std::uint8_t>(f | kExpected));
  }
  minions = std::move(merged);
  flags = std::move(merged_flags);
}

Micros Job::deadline_of(MinionId m) const {
  for (const auto& [id, until] : extended)
    if (id == m) return std::max(until, deadline);
  return deadline;
}

void Job::recount() {
  expected = pending = succeeded = failed = missing = late = 0;
  for (const std::uint8_t f : flags) {
    switch (f & kOutcomeMask) {
      case kPending:
        ++pending;
        break;
      case kSucceeded:
        ++succeeded;
        break;
      case kFailed:
        ++failed;
        break;
      default:
        ++missing;
    }
    if (f & kExpected) ++expected;
    if (f & kLate) ++late;
  }
}

std::size_t Job::memory_bytes() const {
  std::size_t bytes = sizeof(Job) + jid.capacity() + fun.capacity() + user.capacity() + tgt.capacity() +
                      tgt_type.capacity() + args_json.capacity() + rerun_of.capacity() +
                      minions.capacity() * sizeof(MinionId) + flags.capacity() +
                      extended.capacity() * sizeof(extended[0]);
  for (const auto& f : failed_states)
    bytes += sizeof(f) + f.second.id.capacity() + f.second.name.capacity() + f.second.comment.capacity();
  for (const auto& f : failures) bytes += sizeof(f) + f.second.capacity();
  return bytes;
}

}  // namespace salttap::correlator
