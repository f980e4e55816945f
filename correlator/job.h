#pragma once
// Job: what the correlator knows about one jid. Minion sets are compact: a
// sorted vector of interned ids and one flag byte each (5 bytes a minion), so
// 100 jobs x 10,000 pending minions stay well under 200 bytes a minion.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "correlator/audit.h"
#include "correlator/minion_registry.h"
#include "correlator/return_analysis.h"

namespace salttap::correlator {

enum class JobKind : std::uint8_t { job, runner, wheel, scheduled, orphan };
enum class JobStatus : std::uint8_t { running, succeeded, failed, missing };
std::string_view to_string(JobKind k);
std::string_view to_string(JobStatus s);

// Per-minion flags (Job::flags): the outcome in the low 2 bits, then marks.
// Plain constants, not an enum: they are or-ed together and stored as bytes.
inline constexpr std::uint8_t kPending = 0;
inline constexpr std::uint8_t kSucceeded = 1;
inline constexpr std::uint8_t kFailed = 2;
inline constexpr std::uint8_t kMissing = 3;
inline constexpr std::uint8_t kOutcomeMask = 3;
inline constexpr std::uint8_t kLate = 1 << 2;      // returned after its deadline
inline constexpr std::uint8_t kExpected = 1 << 3;  // in the `new` event's minion list

struct Job {
  std::string jid;
  JobKind kind = JobKind::job;
  std::string fun;  // comma-joined for multi-function jobs
  std::string user;
  std::string tgt;  // comma-joined when a list
  std::string tgt_type;
  std::string args_json;       // the publish arguments as JSON, secrets redacted
  bool args_redacted = false;  // args_json is not what was published (a secret redacted, or cut)
  std::string rerun_of;        // the jid this job re-runs: `salttap_rerun_of` in its returns' metadata
  // On a master of masters: the syndics the `new` listed that only stood in
  // for the minions below them (`syndic/<id>/<jid>`). The merged view of a
  // job across masters leaves them out (history/job_merge.h). Not kept in
  // the checkpoint: the verdict no longer needs them.
  std::vector<std::string> syndics;
  Micros started_at = 0;
  Micros deadline = 0;  // base deadline for every expected minion
  Micros settled_at = 0;
  Micros next_check = 0;  // when the correlator looks at this job again

  std::vector<MinionId> minions;  // sorted
  std::vector<std::uint8_t> flags;
  std::vector<std::pair<MinionId, Micros>> extended;  // find_job: still running there
  std::size_t expected = 0, pending = 0, succeeded = 0, failed = 0, missing = 0, late = 0;
  std::uint64_t progress_events = 0;

  bool state_run = false;
  StateCounts states;
  std::vector<std::pair<MinionId, FailedState>> failed_states;  // capped
  std::vector<std::pair<MinionId, std::string>> failures;       // failed minions and why, capped
  std::optional<bool> outcome_success;                          // runner / wheel: from their `ret`
  std::string outcome_reason;

  Risk risk;
  bool settled = false;
  std::uint32_t updates = 0;        // times re-emitted after settling (late returns)
  std::uint64_t open_seq = 0;       // opening order
  std::size_t accounted_bytes = 0;  // what the correlator's memory budget counts for it
  // Why it left memory before its time (the alert says so); none: it did not.
  enum class Evicted : std::uint8_t { none, max_jobs, memory_budget } evicted = Evicted::none;

  JobStatus status() const;
  // Index of `m` in minions, inserting it (pending, not expected) if absent.
  std::size_t slot(MinionId m);
  // Marks sorted, unique `ids` expected, adding the ones not yet present (one merge, not one insert each).
  void expect(const std::vector<MinionId>& ids);
  [[nodiscard]] std::optional<std::size_t> find(MinionId m) const;
  Micros deadline_of(MinionId m) const;
  // Sets the counters (expected, pending ... late) from the minion flags.
  void recount();
  // Calls fn(id) for the first `cap` minions whose flags satisfy pred; returns
  // how many matched in all (so callers can say "+N more").
  template <typename Pred, typename Fn>
  std::size_t for_each_minion(Pred pred, Fn fn, std::size_t cap = SIZE_MAX) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < minions.size(); ++i)
      if (pred(flags[i]) && n++ < cap) fn(minions[i]);
    return n;
  }
  std::size_t memory_bytes() const;
};

}  // namespace salttap::correlator
