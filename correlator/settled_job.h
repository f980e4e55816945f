#pragma once
// SettledJob: a settled job while it waits for late returns (late_grace),
// kept in bytes, not kilobytes. It holds what a late return and the job's
// later documents (`updated`, `final`) need, and nothing else:
//
//   jid                 16 bytes, inline (JidKey): the job's key
//   minions             interned id and the 4 flag bits of each, packed in
//                       4 bytes; two minions inline in 8 bytes, more in one
//                       allocation (4 bytes a minion and its count)
//   times, counters     started, settled, end of grace; opening order (56
//                       bits) with the kind (8); updates, progress
//   load                what `new` said (function, target, user, arguments,
//                       re-run, risk): a JobLoad shared by every job of the
//                       same command (SharedPool)
//   detail              what returns said beyond each outcome (failure
//                       reasons, failed states, state counts, a runner's
//                       outcome): a shared JobDetail, none for most jobs
//
// The verdict is not stored twice: counts are recounted from the flags.
// expand() gives back a Job equal, in every field a document or alert
// reads, to the one compacted, so a late return is judged and written
// exactly as if the job had stayed whole (tests/unit/correlator).
// A jid JidKey cannot hold, or a job whose minion ids do not fit 28 bits, is not
// compactable and stays whole.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "correlator/job.h"
#include "correlator/shared_pool.h"

namespace salttap::correlator {

// What `new` said: the same for every job of one command.
struct JobLoad {
  std::string fun, user, tgt, tgt_type, args_json, rerun_of;
  bool args_redacted = false;
  Risk risk;
  bool operator==(const JobLoad&) const = default;
  std::size_t memory_bytes() const;
  template <typename H>
  friend H AbslHashValue(H h, const JobLoad& l) {
    return H::combine(std::move(h), l.fun, l.user, l.tgt, l.tgt_type, l.args_json, l.rerun_of, l.args_redacted,
                      l.risk.level, l.risk.reasons);
  }
};

// What returns said beyond each minion's outcome; empty for most jobs.
struct JobDetail {
  bool state_run = false;
  StateCounts states;
  std::vector<std::pair<MinionId, FailedState>> failed_states;
  std::vector<std::pair<MinionId, std::string>> failures;
  std::optional<bool> outcome_success;
  std::string outcome_reason;
  bool operator==(const JobDetail&) const = default;
  bool empty() const { return *this == JobDetail{}; }
  std::size_t memory_bytes() const;
  template <typename H>
  friend H AbslHashValue(H h, const JobDetail& d) {
    h = H::combine(std::move(h), d.state_run, d.states.total, d.states.succeeded, d.states.failed, d.states.changed,
                   d.states.would_change, d.outcome_success, d.outcome_reason, d.failures.size(),
                   d.failed_states.size());
    for (const auto& [m, why] : d.failures) h = H::combine(std::move(h), m, why);
    for (const auto& [m, f] : d.failed_states)
      h = H::combine(std::move(h), m, f.id, f.name, f.function, f.comment, f.run_num);
    return h;
  }
};

using LoadPool = SharedPool<JobLoad>;
using DetailPool = SharedPool<JobDetail>;

// A jid in 16 bytes, no allocation: up to 30 digits packed two a byte
// (Salt's jids are 20 digits), or any other jid of up to 15 bytes.
class JidKey {
 public:
  static std::optional<JidKey> of(std::string_view jid);
  std::string text() const;
  bool operator==(const JidKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const JidKey& k) {
    return H::combine(std::move(h), std::string_view(k.bytes_.data(), k.bytes_.size()));
  }

 private:
  static constexpr std::size_t kDigits = 30;
  static constexpr char kNumeric = static_cast<char>(0x80);  // in the last byte, with the length
  std::array<char, 16> bytes_{};
};

// A job's minions, sorted by id, each as (id << 4 | flags), in one 8-byte
// word: up to two inline, more in one allocation that starts with its count.
//   word 0              no minion
//   low bit 1           the allocation's address | 1: [count, packed...]
//   low bit 0           inline: low half (first + 1) << 1, high half second + 1
//                       (0: one minion); when the values allow it, else allocated
class PackedMinions {
 public:
  static constexpr std::uint32_t kMaxId = (1u << 28) - 1;
  static constexpr std::uint32_t kInline = 2;

  PackedMinions() = default;
  explicit PackedMinions(std::span<const std::uint32_t> packed);
  PackedMinions(const PackedMinions& o);
  PackedMinions(PackedMinions&& o) noexcept : word_(std::exchange(o.word_, 0)) {}
  PackedMinions& operator=(PackedMinions o) noexcept {
    std::swap(word_, o.word_);
    return *this;
  }
  ~PackedMinions();

  std::size_t size() const;
  std::uint32_t operator[](std::size_t i) const;
  std::vector<std::uint32_t> values() const;
  std::size_t heap_bytes() const { return heap() ? (size() + 1) * sizeof(std::uint32_t) : 0; }
  static std::uint32_t pack(MinionId id, std::uint8_t flags) { return (id << 4) | (flags & 0x0F); }
  static MinionId id(std::uint32_t packed) { return packed >> 4; }
  static std::uint8_t flags(std::uint32_t packed) { return static_cast<std::uint8_t>(packed & 0x0F); }

 private:
  bool heap() const { return (word_ & 1) != 0; }
  const std::uint32_t* allocation() const;
  std::uint64_t word_ = 0;
};

// Its jid is its key (JidKey).
struct SettledJob {
  static constexpr std::uint64_t kMaxSeq = (std::uint64_t{1} << 56) - 1;
  Micros started_at = 0;
  Micros settled_at = 0;
  Micros grace_end = 0;             // when it leaves memory, emitted `final`
  std::uint64_t open_seq : 56 = 0;  // 2^56 jobs: beyond any daemon's life
  JobKind kind : 8 = JobKind::job;
  LoadPool::Ref load = LoadPool::kNone;
  DetailPool::Ref detail = DetailPool::kNone;
  std::uint32_t updates = 0;
  std::uint32_t progress_events = 0;  // saturates
  PackedMinions minions;

  // What it holds in all: its own bytes and its minions' allocation (the
  // shared load and detail are the pools').
  std::size_t memory_bytes() const { return sizeof(SettledJob) + minions.heap_bytes(); }
};

// Whether `job` (settled) fits the compact form.
bool compactable(const Job& job);
// Moves the settled `job`'s load and detail into the pools (shared with
// equal ones) and packs the rest. Only for compactable jobs.
SettledJob compact(Job&& job, LoadPool& loads, DetailPool& details);
// The job back, whole, as it was compacted (next_check = grace_end; the
// deadline, passed and read by nothing once settled, is the settling time).
Job expand(const JidKey& jid, const SettledJob& s, Micros grace_end, const LoadPool& loads, const DetailPool& details);
// Gives the job's references back to the pools.
void release(const SettledJob& s, LoadPool& loads, DetailPool& details);

}  // namespace salttap::correlator
