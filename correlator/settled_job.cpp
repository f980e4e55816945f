#include "correlator/settled_job.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace salttap::correlator {

std::size_t JobLoad::memory_bytes() const {
  std::size_t bytes = sizeof(JobLoad) + fun.capacity() + user.capacity() + tgt.capacity() + tgt_type.capacity() +
                      args_json.capacity() + rerun_of.capacity() + risk.reasons.capacity() * sizeof(std::string);
  for (const auto& r : risk.reasons) bytes += r.capacity();
  return bytes;
}

std::size_t JobDetail::memory_bytes() const {
  std::size_t bytes = sizeof(JobDetail) + outcome_reason.capacity() + failures.capacity() * sizeof(failures[0]) +
                      failed_states.capacity() * sizeof(failed_states[0]);
  for (const auto& [m, why] : failures) bytes += why.capacity();
  for (const auto& [m, f] : failed_states)
    bytes += f.id.capacity() + f.name.capacity() + f.function.capacity() + f.comment.capacity();
  return bytes;
}

std::optional<JidKey> JidKey::of(std::string_view jid) {
  JidKey k;
  const bool digits = !jid.empty() && std::all_of(jid.begin(), jid.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits && jid.size() <= kDigits) {
    for (std::size_t i = 0; i < jid.size(); ++i) {
      const auto nibble = static_cast<unsigned char>(jid[i] - '0');
      k.bytes_[i / 2] = static_cast<char>(k.bytes_[i / 2] | (i % 2 ? nibble : nibble << 4));
    }
    k.bytes_[15] = static_cast<char>(kNumeric | static_cast<char>(jid.size()));
    return k;
  }
  if (jid.empty() || jid.size() > 15) return std::nullopt;
  std::memcpy(k.bytes_.data(), jid.data(), jid.size());
  k.bytes_[15] = static_cast<char>(jid.size());
  return k;
}

std::string JidKey::text() const {
  const auto last = static_cast<unsigned char>(bytes_[15]);
  const std::size_t n = last & 0x7F;
  if (!(last & 0x80)) return {bytes_.data(), n};
  std::string out(n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<unsigned char>(bytes_[i / 2]);
    out[i] = static_cast<char>('0' + (i % 2 ? (b & 0x0F) : (b >> 4)));
  }
  return out;
}

namespace {

// An allocation's address in the word, with the tag bit (new[] aligns it: its low bit is 0).
// Copied, not cast, as allocation() reads it back.
std::uint64_t tagged(const std::uint32_t* block) {
  std::uintptr_t address = 0;
  static_assert(sizeof(block) == sizeof(address));
  std::memcpy(&address, &block, sizeof(address));
  return static_cast<std::uint64_t>(address) | 1;
}

}  // namespace

PackedMinions::PackedMinions(std::span<const std::uint32_t> packed) {
  if (packed.empty()) return;
  // Inline: the first shifted left by one (the low bit says "allocated"), each plus one (0: none).
  const bool fits = packed.size() <= kInline && packed[0] < (1u << 31) - 1 &&
                    (packed.size() < 2 || packed[1] < std::numeric_limits<std::uint32_t>::max());
  if (fits) {
    word_ = std::uint64_t{packed[0] + 1} << 1;
    if (packed.size() == 2) word_ |= std::uint64_t{packed[1] + 1} << 32;
    return;
  }
  auto* block = new std::uint32_t[packed.size() + 1];
  block[0] = static_cast<std::uint32_t>(packed.size());
  std::copy(packed.begin(), packed.end(), block + 1);
  word_ = tagged(block);
}

PackedMinions::PackedMinions(const PackedMinions& o) : word_(o.word_) {
  if (!o.heap()) return;
  const std::size_t n = o.size();
  auto* block = new std::uint32_t[n + 1];
  std::copy(o.allocation(), o.allocation() + n + 1, block);
  word_ = tagged(block);
}

// The allocation's address: the word without its tag bit (tagged()).
const std::uint32_t* PackedMinions::allocation() const {
  const auto address = static_cast<std::uintptr_t>(word_ & ~std::uint64_t{1});
  const std::uint32_t* block = nullptr;
  static_assert(sizeof(block) == sizeof(address));
  std::memcpy(&block, &address, sizeof(block));
  return block;
}

PackedMinions::~PackedMinions() {
  if (heap()) delete[] allocation();
}

std::size_t PackedMinions::size() const {
  if (word_ == 0) return 0;
  if (heap()) return allocation()[0];
  return (word_ >> 32) == 0 ? 1 : 2;
}

std::uint32_t PackedMinions::operator[](std::size_t i) const {
  if (heap()) return allocation()[i + 1];
  return i == 0 ? static_cast<std::uint32_t>((word_ & 0xFFFFFFFFu) >> 1) - 1
                : static_cast<std::uint32_t>(word_ >> 32) - 1;
}

std::vector<std::uint32_t> PackedMinions::values() const {
  std::vector<std::uint32_t> out(size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = (*this)[i];
  return out;
}

bool compactable(const Job& job) {
  if (!job.settled || !JidKey::of(job.jid) || job.open_seq > SettledJob::kMaxSeq) return false;
  return job.minions.empty() || job.minions.back() <= PackedMinions::kMaxId;  // sorted: the last is the largest
}

SettledJob compact(Job&& job, LoadPool& loads, DetailPool& details) {
  SettledJob s;
  s.started_at = job.started_at;
  s.settled_at = job.settled_at;
  s.open_seq = job.open_seq;
  s.updates = job.updates;
  s.progress_events = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(job.progress_events, std::numeric_limits<std::uint32_t>::max()));
  s.kind = job.kind;
  std::vector<std::uint32_t> packed;
  packed.reserve(job.minions.size());
  for (std::size_t i = 0; i < job.minions.size(); ++i)
    packed.push_back(PackedMinions::pack(job.minions[i], job.flags[i]));
  s.minions = PackedMinions(packed);
  s.load =
      loads.intern(JobLoad{std::move(job.fun), std::move(job.user), std::move(job.tgt), std::move(job.tgt_type),
                           std::move(job.args_json), std::move(job.rerun_of), job.args_redacted, std::move(job.risk)});
  JobDetail detail{job.state_run,           job.states,          std::move(job.failed_states),
                   std::move(job.failures), job.outcome_success, std::move(job.outcome_reason)};
  if (!detail.empty()) s.detail = details.intern(std::move(detail));
  return s;
}

Job expand(const JidKey& jid, const SettledJob& s, Micros grace_end, const LoadPool& loads, const DetailPool& details) {
  Job job;
  job.jid = jid.text();
  job.kind = s.kind;
  const JobLoad& load = loads.get(s.load);
  job.fun = load.fun;
  job.user = load.user;
  job.tgt = load.tgt;
  job.tgt_type = load.tgt_type;
  job.args_json = load.args_json;
  job.args_redacted = load.args_redacted;
  job.rerun_of = load.rerun_of;
  job.risk = load.risk;
  job.started_at = s.started_at;
  job.settled_at = s.settled_at;
  job.deadline = s.settled_at;
  job.next_check = grace_end;
  job.minions.reserve(s.minions.size());
  job.flags.reserve(s.minions.size());
  for (std::size_t i = 0; i < s.minions.size(); ++i) {
    const std::uint32_t p = s.minions[i];
    job.minions.push_back(PackedMinions::id(p));
    job.flags.push_back(PackedMinions::flags(p));
  }
  job.recount();
  job.progress_events = s.progress_events;
  if (s.detail != DetailPool::kNone) {
    const JobDetail& d = details.get(s.detail);
    job.state_run = d.state_run;
    job.states = d.states;
    job.failed_states = d.failed_states;
    job.failures = d.failures;
    job.outcome_success = d.outcome_success;
    job.outcome_reason = d.outcome_reason;
  }
  job.settled = true;
  job.updates = s.updates;
  job.open_seq = s.open_seq;
  return job;
}

void release(const SettledJob& s, LoadPool& loads, DetailPool& details) {
  loads.release(s.load);
  details.release(s.detail);
}

}  // namespace salttap::correlator
