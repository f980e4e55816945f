#include "correlator/correlator.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include <fmt/format.h>

#include "common/log.h"
#include "common/text.h"
#include "tap/event_to_json.h"
#include "tap/tag.h"

namespace salttap::correlator {
namespace {

using tap::as_string;
using tap::map_find;

constexpr std::size_t kMaxArgsJson = std::size_t{64} * 1024;
// Jobs evicted early remembered at most (about 1.5 MB), for their late returns.
constexpr std::size_t kDroppedKept = std::size_t{1} << 16;
// What a whole job costs beside Job::memory_bytes(): its jid's allocation in
// the map key, its node in order_ (with a jid) and its timer (with a jid).
constexpr std::size_t kJidHeap = 32;
constexpr std::size_t kMapNode = 48;

std::string string_or_empty(const tap::Event& e, std::string_view key) {
  return std::string(e.string_field(key).value_or(""));
}

// The minions an event's list names (its strings; anything else is skipped), interned, sorted and each
// once: what Job::expect takes.
std::vector<MinionId> minion_ids(const msgpack::object& list, MinionRegistry& minions) {
  std::vector<MinionId> ids;
  ids.reserve(list.via.array.size);
  for (std::uint32_t i = 0; i < list.via.array.size; ++i)
    if (auto name = as_string(list.via.array.ptr[i])) ids.push_back(minions.intern(*name));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

Correlator::Correlator(CorrelatorConfig config, const Clock& clock, Sink sink, std::shared_ptr<const Auditor> auditor,
                       std::shared_ptr<const Redactor> redactor)
    : config_(std::move(config)),
      clock_(clock),
      sink_(std::move(sink)),
      auditor_(std::move(auditor)),
      redactor_(std::move(redactor)),
      noise_funs_(config_.noise_funs) {}

void Correlator::reconfigure(CorrelatorConfig config, std::shared_ptr<const Auditor> auditor,
                             std::shared_ptr<const Redactor> redactor) {
  config_ = std::move(config);
  auditor_ = std::move(auditor);
  redactor_ = std::move(redactor);
  noise_funs_ = GlobList(config_.noise_funs);
}

// What eviction can free: counted per job, without the tables' spare room.
std::size_t Correlator::jobs_bytes() const {
  const std::size_t whole = jobs_.size() * (sizeof(std::string) + sizeof(void*) + 1 + kJidHeap) +
                            order_.size() * (kMapNode + sizeof(std::string) + kJidHeap) + jobs_.size() * sizeof(Timer) +
                            open_bytes_;  // one live timer each
  const std::size_t compact = settled_.size() * (sizeof(std::pair<const JidKey, SettledJob>) + 1) +
                              settled_heap_bytes_ + grace_queue_.size() * sizeof(grace_queue_[0]) +
                              loads_.memory_bytes() + details_.memory_bytes();
  return whole + compact;
}

// Everything held, the tables' spare room and the minion registry included.
std::size_t Correlator::memory_bytes() const {
  const std::size_t spare =
      (jobs_.capacity() - jobs_.size()) * (sizeof(std::string) + sizeof(void*) + 1) +
      (settled_.capacity() - settled_.size()) * (sizeof(std::pair<const JidKey, SettledJob>) + 1) +
      dropped_.size() * sizeof(dropped_[0]) + dropped_set_.capacity() * (sizeof(JidKey) + 1) +
      (timers_.size() - std::min(timers_.size(), jobs_.size())) * sizeof(Timer);  // stale timers
  return minions_.memory_bytes() + jobs_bytes() + spare;  // the evicted jids kept (bounded) are not the budget's
}

std::optional<Job> Correlator::find(std::string_view jid) const {
  if (const Job* job = find_whole(jid)) return *job;
  const auto key = JidKey::of(jid);
  if (!key) return std::nullopt;
  const auto it = settled_.find(*key);
  if (it == settled_.end()) return std::nullopt;
  return expand(*key, it->second, it->second.grace_end, loads_, details_);
}

void Correlator::on_event(const tap::Event& e) {
  ++stats_.events;
  ++revision_;
  const std::string_view tag = e.tag();
  if (tag.starts_with("salt/job/")) {
    // salt/job/<jid>/<what>[/<minion>[/<n>]], split once.
    std::string_view rest = tag.substr(9);
    const std::string_view jid = rest.substr(0, rest.find('/'));
    rest.remove_prefix(std::min(rest.size(), jid.size() + 1));
    const std::string_view what = rest.substr(0, rest.find('/'));
    rest.remove_prefix(std::min(rest.size(), what.size() + 1));
    const std::string_view minion = rest.substr(0, rest.find('/'));
    // Noise jobs are never opened, so a return to a known job is not noise:
    // only unknown jids pay for the `fun` lookup.
    Job* known = what == "ret" ? find_or_revive(jid) : nullptr;
    if (what == "ret" && known == nullptr && is_noise(e)) {
      ++stats_.noise_events;
      on_find_job_ret(minions_.intern(minion), e);
    } else if (what == "ret" && known == nullptr && was_dropped(jid)) {
      ++stats_.returns;
      if (stats_.late_unknown_returns++ % 1000 == 0)
        log::warn(
            "correlator: a return for job {} from {}, evicted early from memory: counted, not indexed ({} so far)", jid,
            minion, stats_.late_unknown_returns);
    } else if (what == "new" && is_noise(e)) {
      ++stats_.noise_events;
    } else if (what == "new") {
      on_new(jid, e);
    } else if (what == "ret") {
      on_ret(jid, minion, e, known);
    } else if (what == "prog") {
      ++stats_.progress_events;
      note_progress(jid);
      minions_.facts(minions_.intern(minion)).last_seen = clock_.now();
    } else {
      ++stats_.other_events;  // publish (3007+), error, sub/.../error
    }
  } else if (tag.starts_with("salt/run/")) {
    on_runner(tap::tag_part(tag, 2), tap::tag_part(tag, 3), JobKind::runner, e);
  } else if (tag.starts_with("salt/wheel/")) {
    on_runner(tap::tag_part(tag, 2), tap::tag_part(tag, 3), JobKind::wheel, e);
  } else if (tag.starts_with("syndic/") && e.find("minions")) {
    on_syndic_minions(tap::tag_part(tag, 1), tap::tag_part(tag, 2), e);
  } else {
    on_minion_event(tag, e);
  }
  // What this event changed of its job counts against the memory budget.
  if (tag.starts_with("salt/") || tag.starts_with("syndic/"))
    if (Job* job = find_job(tap::tag_part(tag, 2))) account(*job);
  repark();
  enforce_cap();
}

// Failure reasons and state comments quote returns: the same redaction as
// arguments (PEM key blocks, name=value secrets) applies before they leave.
std::string Correlator::redact_text(const std::string& text) const {
  msgpack::zone zone;
  msgpack::object o;
  o.type = msgpack::type::STR;
  o.via.str.ptr = text.data();
  o.via.str.size = static_cast<std::uint32_t>(text.size());
  const msgpack::object safe = redactor_->redact(o, zone);
  std::string out(*as_string(safe));
  // Free text may carry `name=value` (or `--name=value`) tokens anywhere.
  const auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  };
  for (std::size_t eq = out.find('='); eq != std::string::npos; eq = out.find('=', eq + 1)) {
    std::size_t start = eq;
    while (start > 0 && word(out[start - 1])) --start;
    std::size_t name_start = start;
    while (name_start < eq && out[name_start] == '-') ++name_start;
    std::size_t end = eq + 1;
    while (end < out.size() && !std::isspace(static_cast<unsigned char>(out[end])) && out[end] != '"' &&
           out[end] != '\'')
      ++end;
    if (name_start == eq || end == eq + 1) continue;
    if (!redactor_->is_secret_key(std::string_view(out).substr(name_start, eq - name_start))) continue;
    out.replace(eq + 1, end - eq - 1, kRedactedMarker);
    eq += kRedactedMarker.size();
  }
  return out;
}

// A re-run names the job it repeats in the metadata Salt copies from the
// publish into every return (`metadata: {salttap_rerun_of: <jid>}`,
// docs/remediation.md). Anything but a plain jid is ignored.
void Correlator::note_rerun_of(Job& job, const tap::Event& e) {
  if (!job.rerun_of.empty()) return;
  const msgpack::object* meta = e.find("metadata");
  if (!meta || meta->type != msgpack::type::MAP) return;
  const msgpack::object* of = map_find(*meta, "salttap_rerun_of");
  const auto jid = of ? as_string(*of) : std::nullopt;
  if (!jid || jid->empty() || jid->size() > 64 || *jid == job.jid) return;
  const bool plain = std::all_of(jid->begin(), jid->end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  if (plain) job.rerun_of = std::string(*jid);
}

bool Correlator::is_noise(const tap::Event& e) const {
  const auto fun = e.string_field("fun");
  if (!fun) return false;
  return noise_funs_.matches_any(*fun);
}

Job& Correlator::open_job(std::string_view jid, JobKind kind, Micros started_at) {
  if (Job* settled = revive(jid)) return *settled;
  auto [it, inserted] = jobs_.try_emplace(std::string(jid));  // the one allocation per job
  if (inserted) {
    it->second = std::make_unique<Job>();
    Job& job = *it->second;
    job.jid = std::string(jid);
    job.kind = kind;
    job.started_at = started_at;
    job.open_seq = next_seq_++;
    order_.emplace(job.open_seq, job.jid);
    ++stats_.jobs_opened;
  }
  return *it->second;
}

void Correlator::describe_call(Job& job, const msgpack::object* fun, const msgpack::object* args,
                               const msgpack::object* tgt, const tap::Event& e) {
  job.fun = tap::joined_strings(fun);
  job.user = string_or_empty(e, "user");
  job.tgt = tap::joined_strings(tgt);
  job.tgt_type = string_or_empty(e, "tgt_type");
  if (args) {
    msgpack::zone zone;
    std::size_t redactions = 0;  // the redactor counts what it replaced: no second encoding to compare
    const msgpack::object safe = redactor_ ? redactor_->redact(*args, zone, &redactions) : *args;
    job.args_json.clear();
    tap::append_msgpack_json(job.args_json, safe);
    job.args_redacted = redactions > 0;
    if (job.args_json.size() > kMaxArgsJson) {
      job.args_json = "\"<arguments over 64 KiB not kept>\"";
      job.args_redacted = true;
    }
  }
  if (auditor_) {
    job.risk =
        auditor_->assess({job.fun, args, tgt, job.tgt_type, std::max(job.expected, job.minions.size()), job.user});
  }
}

void Correlator::on_new(std::string_view jid, const tap::Event& e) {
  const Micros now = clock_.now();
  const auto stamp = e.string_field("_stamp");
  const Micros started = (stamp ? parse_salt_stamp(*stamp) : std::nullopt).value_or(now);
  Job& job = open_job(jid, JobKind::job, started);
  // Returns may have arrived first and opened it as an orphan, which may
  // even have settled before the load came (`run`'s reconcile hands a
  // job's load from the job cache after its first live returns): it is a
  // job from now on, open again until its own deadline.
  if (job.kind != JobKind::job && job.settled) job.settled = false;
  job.kind = JobKind::job;
  job.started_at = std::min(job.started_at, started);

  if (const msgpack::object* list = e.find("minions"); list && list->type == msgpack::type::ARRAY)
    job.expect(minion_ids(*list, minions_));
  // `missing`: list-target entries without an accepted key; the CLI reports
  // them failed. On a master of masters they are the syndics' minions,
  // expected like the others.
  const msgpack::object* missing_list = e.find("missing");
  if (missing_list && missing_list->type == msgpack::type::ARRAY && config_.order_masters) {
    job.expect(minion_ids(*missing_list, minions_));
  } else if (const msgpack::object* list = missing_list; list && list->type == msgpack::type::ARRAY) {
    for (std::uint32_t i = 0; i < list->via.array.size; ++i) {
      auto name = as_string(list->via.array.ptr[i]);
      if (!name) continue;
      const MinionId m = minions_.intern(*name);
      const std::size_t s = job.slot(m);
      if ((job.flags[s] & kOutcomeMask) != kPending) continue;
      job.flags[s] = kExpected | kFailed;
      ++job.expected;
      --job.pending;
      ++job.failed;
      if (job.failures.size() < config_.max_failures) job.failures.emplace_back(m, "no accepted key for this minion");
    }
  }
  describe_call(job, e.find("fun"), e.find("arg"), e.find("tgt"), e);
  note_rerun_of(job, e);
  job.deadline = job.started_at + config_.deadline_for(job.fun);
  if (observer_) observer_->job_opened(job);
  if (job.pending == 0) return settle(job);  // matched nothing, or every return came first
  schedule(job, job.deadline);
}

void Correlator::on_ret(std::string_view jid, std::string_view minion_name, const tap::Event& e, Job* found) {
  ++stats_.returns;
  const Micros now = clock_.now();
  if (minion_name.empty()) minion_name = e.string_field("id").value_or("");
  const MinionId m = minions_.intern(minion_name);
  minions_.facts(m).last_seen = now;

  if (!found) {
    // No `new`: a minion schedule, salt-call, or a job begun before we connected.
    found = &open_job(jid, e.find("schedule") ? JobKind::scheduled : JobKind::orphan, now);
    describe_call(*found, e.find("fun"), e.find("fun_args"), e.find("tgt"), e);
  }
  Job& job = *found;
  note_rerun_of(job, e);
  const bool without_new = job.kind == JobKind::scheduled || job.kind == JobKind::orphan;

  std::size_t s;
  if (auto existing = job.find(m)) {
    s = *existing;
  } else {
    if (!without_new) ++stats_.unexpected_returns;
    s = job.slot(m);
  }
  const std::uint8_t before = job.flags[s] & kOutcomeMask;
  if (before == kSucceeded || before == kFailed) {
    ++stats_.duplicate_returns;  // the job cache keeps the first one too
    return;
  }
  const ReturnAnalysis a = analyze_return(e.data(), config_.max_failed_states);
  const bool late = before == kMissing || (job.settled && !without_new);
  if (before == kMissing)
    --job.missing;
  else
    --job.pending;
  job.flags[s] = static_cast<std::uint8_t>((job.flags[s] & ~kOutcomeMask) | (a.failed ? kFailed : kSucceeded) |
                                           (late ? kLate : 0));
  ++(a.failed ? job.failed : job.succeeded);
  if (late) {
    ++job.late;
    ++stats_.late_returns;
  }
  if (a.failed && job.failures.size() < config_.max_failures)
    job.failures.emplace_back(m, redactor_ ? redact_text(a.reason) : a.reason);
  if (a.state_run) {
    job.state_run = true;
    job.states += a.states;
    for (const FailedState& f : a.failed_states) {
      if (job.failed_states.size() >= config_.max_failed_states) break;
      job.failed_states.emplace_back(m, f);
      if (redactor_) job.failed_states.back().second.comment = redact_text(f.comment);
    }
  }

  if (observer_) observer_->job_returned(job, m, e, a, late);

  if (without_new && !job.settled) {
    schedule(job, now + config_.orphan_settle);  // more returns for this jid may follow
  } else if (job.settled) {
    ++job.updates;
    sink_(JobUpdate::updated, job);
  } else if (job.pending == 0) {
    settle(job);
  }
}

// On a master of masters, `syndic/<syndic id>/<jid>` {minions: [...]}: the
// minions a syndic published the job to below it. The master's `new` listed
// the syndic itself (it is a minion of this master) and none of them: they
// become expected, and the syndic is not, since it never returns for itself.
void Correlator::on_syndic_minions(std::string_view syndic, std::string_view jid, const tap::Event& e) {
  ++stats_.other_events;
  Job* found = find_job(jid);
  const msgpack::object* list = e.find("minions");
  if (!found || found->settled || found->kind != JobKind::job || list->type != msgpack::type::ARRAY) return;
  Job& job = *found;
  const std::vector<MinionId> ids = minion_ids(*list, minions_);
  job.expect(ids);
  const MinionId sid = minions_.intern(syndic);
  if (std::binary_search(ids.begin(), ids.end(), sid)) return;  // also a minion below itself
  if (const auto s = job.find(sid); s && (job.flags[*s] & kOutcomeMask) == kPending) {
    if (std::find(job.syndics.begin(), job.syndics.end(), syndic) == job.syndics.end())
      job.syndics.emplace_back(syndic);
    if (job.flags[*s] & kExpected) --job.expected;
    --job.pending;
    job.minions.erase(job.minions.begin() + static_cast<std::ptrdiff_t>(*s));
    job.flags.erase(job.flags.begin() + static_cast<std::ptrdiff_t>(*s));
    std::erase_if(job.extended, [&](const auto& x) { return x.first == sid; });
  }
  if (job.pending == 0) settle(job);
}

void Correlator::on_find_job_ret(MinionId minion, const tap::Event& e) {
  minions_.facts(minion).last_seen = clock_.now();  // an answer, even an empty one, proves the minion alive
  // A non-empty return is the minion's proc data: the job is still running there.
  const msgpack::object* ret = e.find("return");
  if (!ret || ret->type != msgpack::type::MAP || ret->via.map.size == 0) return;
  const msgpack::object* running = map_find(*ret, "jid");
  auto jid = running ? as_string(*running) : std::nullopt;
  if (!jid) return;
  Job* found = find_job(*jid);
  if (!found || found->settled) return;
  Job& job = *found;
  const auto s = job.find(minion);
  if (!s || (job.flags[*s] & kOutcomeMask) != kPending) return;
  const Micros until = clock_.now() + (job.deadline - job.started_at);
  auto ext = std::find_if(job.extended.begin(), job.extended.end(), [&](const auto& x) { return x.first == minion; });
  if (ext == job.extended.end())
    job.extended.emplace_back(minion, until);
  else
    ext->second = std::max(ext->second, until);
  account(job);
  ++stats_.find_job_extensions;
}

void Correlator::on_runner(std::string_view jid, std::string_view what, JobKind kind, const tap::Event& e) {
  const Micros now = clock_.now();
  if (what == "new") {
    const auto stamp = e.string_field("_stamp");
    Job& job = open_job(jid, kind, (stamp ? parse_salt_stamp(*stamp) : std::nullopt).value_or(now));
    describe_call(job, e.find("fun"), e.find("fun_args"), nullptr, e);
    job.deadline = job.started_at + config_.deadline_for(job.fun);
    if (observer_) observer_->job_opened(job);
    schedule(job, job.deadline);
  } else if (what == "ret") {
    Job* found = find_or_revive(jid);
    if (!found) {
      found = &open_job(jid, kind, now);
      describe_call(*found, e.find("fun"), e.find("fun_args"), nullptr, e);
    }
    Job& job = *found;
    const ReturnAnalysis a = analyze_return(e.data(), config_.max_failed_states);
    job.outcome_success = !a.failed;
    job.outcome_reason = a.reason;
    if (job.settled) {
      ++job.updates;
      sink_(JobUpdate::updated, job);
    } else {
      settle(job);
    }
  } else {
    ++stats_.progress_events;  // args (orchestration), __jid_event__ progress
    note_progress(jid);
  }
}

void Correlator::on_minion_event(std::string_view tag, const tap::Event& e) {
  const Micros now = clock_.now();
  auto touch = [&](std::string_view id) -> MinionFacts& {
    MinionFacts& f = minions_.facts(minions_.intern(id));
    f.last_seen = now;
    return f;
  };
  if (tag.starts_with("salt/minion/") && tag.ends_with("/start")) {
    touch(tap::tag_part(tag, 2)).last_start = now;
  } else if (tag == "minion_start") {
    if (auto id = e.string_field("id")) touch(*id).last_start = now;
  } else if (tag == "salt/auth") {
    if (auto id = e.string_field("id")) touch(*id).last_auth = now;
  } else if (tag == "salt/presence/present" || tag == "salt/presence/change") {
    // A `lost` id is news about the minion, not from it: it clears `present`
    // and leaves last_seen alone, or a minion gone quiet would look alive.
    for (const char* key : {"present", "new", "lost"}) {
      const msgpack::object* list = e.find(key);
      if (!list || list->type != msgpack::type::ARRAY) continue;
      const bool lost = std::string_view(key) == "lost";
      for (std::uint32_t i = 0; i < list->via.array.size; ++i) {
        auto id = as_string(list->via.array.ptr[i]);
        if (!id) continue;
        if (lost)
          minions_.facts(minions_.intern(*id)).present = false;
        else
          touch(*id).present = true;
      }
    }
  } else {
    ++stats_.other_events;
    return;
  }
  ++stats_.minion_events;
}

void Correlator::schedule(Job& job, Micros at) {
  job.next_check = at;
  timers_.emplace(at, job.open_seq);
}

void Correlator::advance() {
  const Micros now = clock_.now();
  // Whole jobs' timers and compact jobs' ends of grace, in one order: by
  // time, then by opening order (as if every job had stayed whole).
  while (true) {
    while (!grace_queue_.empty()) {  // entries of jobs gone, or settled again since, first
      const auto it = settled_.find(grace_queue_.front().second);
      if (it != settled_.end() && it->second.grace_end == grace_queue_.front().first) break;
      grace_queue_.pop_front();
    }
    const bool timer_due = !timers_.empty() && timers_.top().first <= now;
    const bool grace_due = !grace_queue_.empty() && grace_queue_.front().first <= now;
    if (!timer_due && !grace_due) break;
    bool take_timer = timer_due;
    if (timer_due && grace_due) {
      const auto& [g_at, g_key] = grace_queue_.front();
      take_timer = timers_.top() < Timer{g_at, std::uint64_t{settled_.find(g_key)->second.open_seq}};
    }
    if (!take_timer) {
      const JidKey key = grace_queue_.front().second;
      grace_queue_.pop_front();
      ++revision_;
      drop_settled(key);
      continue;
    }
    const auto [at, seq] = timers_.top();
    timers_.pop();
    const auto named = order_.find(seq);
    if (named == order_.end()) continue;  // stale timer: the job left
    const std::string jid = named->second;
    Job* job = find_job(jid);
    if (!job || job->next_check != at) continue;  // stale timer
    ++revision_;
    if (job->settled)
      evict(jid, /*early=*/false);
    else
      expire(*job);
  }
  while (!dropped_.empty() && dropped_.front().first <= now) {
    dropped_set_.erase(dropped_.front().second);
    dropped_.pop_front();
  }
}

void Correlator::expire(Job& job) {
  const Micros now = clock_.now();
  Micros next = std::numeric_limits<Micros>::max();
  for (std::size_t i = 0; i < job.minions.size(); ++i) {
    if ((job.flags[i] & kOutcomeMask) != kPending) continue;
    const Micros d = job.deadline_of(job.minions[i]);
    if (d <= now) {
      job.flags[i] = static_cast<std::uint8_t>((job.flags[i] & ~kOutcomeMask) | kMissing);
      --job.pending;
      ++job.missing;
      ++stats_.missing_minions;
    } else {
      next = std::min(next, d);
    }
  }
  if (job.pending == 0)
    settle(job);
  else
    schedule(job, next);
}

// After the sink: `job` is compact from here on (or gone), never touch it.
void Correlator::settle(Job& job) {
  job.settled = true;
  job.settled_at = clock_.now();
  ++stats_.jobs_settled;
  sink_(JobUpdate::settled, job);
  job.next_check = job.settled_at + config_.late_grace;
  park(job, /*queued=*/false);
}

// A settled job waits for late returns compact, in the grace queue, when it
// fits (settled_job.h); else whole, with a timer, as before. `queued`: the
// grace queue already holds it with this end of grace (a late return
// revived it). The Job is destroyed.
void Correlator::park(Job& job, bool queued) {
  const auto key = JidKey::of(job.jid);
  if (!config_.compact_settled || !key || !compactable(job)) {
    schedule(job, job.next_check);
    return;
  }
  const Micros grace_end = job.next_check;
  const std::uint64_t job_seq = job.open_seq;
  open_bytes_ -= job.accounted_bytes;
  order_.erase(job.open_seq);
  const auto it = jobs_.find(absl::string_view(job.jid));
  SettledJob s = compact(std::move(*it->second), loads_, details_);
  jobs_.erase(it);
  s.grace_end = grace_end;
  settled_heap_bytes_ += s.minions.heap_bytes();
  settled_.insert_or_assign(*key, std::move(s));
  if (!queued) enqueue_grace(grace_end, *key, job_seq);
}

// In settling order; jobs whose grace ends at the same time in opening order,
// as their timers fired when every job stayed whole.
void Correlator::enqueue_grace(Micros grace_end, const JidKey& key, std::uint64_t seq) {
  auto at = grace_queue_.end();
  while (at != grace_queue_.begin()) {
    const auto& [prev_end, prev_key] = *std::prev(at);
    if (prev_end != grace_end) break;
    const auto prev = settled_.find(prev_key);
    if (prev == settled_.end() || prev->second.open_seq < seq) break;
    --at;
  }
  grace_queue_.insert(at, {grace_end, key});
}

// A compact settled job made whole again (for a late return, a load from
// reconcile): repark() compacts it back once the event is handled.
Job* Correlator::revive(std::string_view jid) {
  const auto key = JidKey::of(jid);
  if (!key) return nullptr;
  const auto it = settled_.find(*key);
  if (it == settled_.end()) return nullptr;
  auto whole = std::make_unique<Job>(expand(*key, it->second, it->second.grace_end, loads_, details_));
  settled_heap_bytes_ -= it->second.minions.heap_bytes();
  release(it->second, loads_, details_);
  settled_.erase(it);
  Job& job = *whole;
  revived_ = job.jid;
  revived_grace_end_ = job.next_check;
  order_.emplace(job.open_seq, job.jid);
  jobs_.emplace(job.jid, std::move(whole));
  account(job);
  return &job;
}

Job* Correlator::find_or_revive(std::string_view jid) {
  if (Job* job = find_job(jid)) return job;
  return revive(jid);
}

void Correlator::repark() {
  if (revived_.empty()) return;
  const std::string jid = std::move(revived_);
  revived_.clear();
  Job* job = find_job(jid);
  if (!job || !job->settled) return;  // compacted already, or open again (its queue entry goes stale)
  park(*job, /*queued=*/job->next_check == revived_grace_end_);
}

void Correlator::note_progress(std::string_view jid) {
  if (Job* job = find_job(jid)) {
    ++job->progress_events;
  } else if (const auto key = JidKey::of(jid)) {
    if (const auto it = settled_.find(*key); it != settled_.end() && it->second.progress_events < UINT32_MAX)
      ++it->second.progress_events;
  }
}

void Correlator::account(Job& job) {
  const std::size_t now = job.memory_bytes();
  open_bytes_ = open_bytes_ - job.accounted_bytes + now;
  job.accounted_bytes = now;
}

// Emits a compact job's last word and frees it.
void Correlator::drop_settled(const JidKey& key) {
  const auto it = settled_.find(key);
  if (it == settled_.end()) return;
  const Job job = expand(key, it->second, it->second.grace_end, loads_, details_);
  settled_heap_bytes_ -= it->second.minions.heap_bytes();
  release(it->second, loads_, details_);
  settled_.erase(it);
  sink_(JobUpdate::final, job);
}

void Correlator::evict(const std::string& jid, bool early) {
  if (early) ++stats_.evicted_jobs;
  auto it = jobs_.find(absl::string_view(jid));
  if (it == jobs_.end()) {
    if (const auto key = JidKey::of(jid)) drop_settled(*key);
    return;
  }
  sink_(JobUpdate::final, *it->second);
  open_bytes_ -= it->second->accounted_bytes;
  order_.erase(it->second->open_seq);
  jobs_.erase(it);
}

void Correlator::remember_dropped(const JidKey& key, Micros until) {
  dropped_.emplace_back(until, key);
  dropped_set_.insert(key);
  while (dropped_.size() > kDroppedKept) {
    dropped_set_.erase(dropped_.front().second);
    dropped_.pop_front();
  }
}

bool Correlator::was_dropped(std::string_view jid) const {
  const auto key = JidKey::of(jid);
  return key && dropped_set_.contains(*key);
}

// The oldest settled job in grace leaves memory early; false: none left.
bool Correlator::drop_oldest_settled() {
  while (!grace_queue_.empty()) {
    const auto [at, key] = grace_queue_.front();
    grace_queue_.pop_front();
    const auto it = settled_.find(key);
    if (it == settled_.end() || it->second.grace_end != at) continue;
    remember_dropped(key, at);
    drop_settled(key);
    return true;
  }
  return false;
}

// The oldest whole job leaves memory early. An open one is settled first:
// what is still pending is reported missing, the alert says it was evicted.
void Correlator::evict_oldest_whole(Job::Evicted why) {
  const std::string jid = order_.begin()->second;
  Job& job = *find_job(jid);
  const bool was_open = !job.settled;
  if (was_open) {
    for (auto& f : job.flags) {
      if ((f & kOutcomeMask) != kPending) continue;
      f = static_cast<std::uint8_t>((f & ~kOutcomeMask) | kMissing);
      ++job.missing;
      ++stats_.missing_minions;
    }
    job.pending = 0;
    job.evicted = why;
    settle(job);  // parks it: `job` is gone
  }
  if (const auto key = JidKey::of(jid)) remember_dropped(*key, clock_.now() + config_.late_grace);
  if (why == Job::Evicted::max_jobs) {
    evict(jid, /*early=*/true);
    return;
  }
  evict(jid, /*early=*/false);
  ++(was_open ? stats_.budget_evicted_open : stats_.budget_evicted_settled);
}

void Correlator::enforce_cap() {
  // One job leaves memory early, counted under `why`: the oldest settled job
  // first, then the oldest open one; false: no job is left to leave.
  const auto evict_oldest = [this](Job::Evicted why) {
    if (drop_oldest_settled()) {
      ++(why == Job::Evicted::max_jobs ? stats_.evicted_jobs : stats_.budget_evicted_settled);
      return true;
    }
    if (order_.empty()) return false;
    evict_oldest_whole(why);
    return true;
  };
  while (tracked_jobs() > config_.max_jobs)
    if (!evict_oldest(Job::Evicted::max_jobs)) break;
  bool evicted = false;
  while (tracked_jobs() > 0 && jobs_bytes() > config_.memory_budget) {
    evicted = true;
    if (!evict_oldest(Job::Evicted::memory_budget)) break;
  }
  const std::uint64_t budget_evictions = stats_.budget_evicted_settled + stats_.budget_evicted_open;
  if (evicted && budget_evictions >= next_budget_warning_) {
    next_budget_warning_ = budget_evictions + 10'000;  // the first, then one line per 10,000
    log::warn(
        "correlator: memory_budget ({} bytes) reached: {} settled jobs left their late-return window early, {} open "
        "jobs were settled early (alerted as evicted)",
        config_.memory_budget, stats_.budget_evicted_settled, stats_.budget_evicted_open);
  }
}

void Correlator::settle_all() {
  // The replay is over: every deadline has passed.
  std::vector<Job*> open;
  for (auto& [jid, job] : jobs_)
    if (!job->settled) open.push_back(job.get());
  std::sort(open.begin(), open.end(), [](const Job* a, const Job* b) { return a->open_seq < b->open_seq; });
  for (Job* job : open) {
    job->extended.clear();
    job->deadline = std::numeric_limits<Micros>::min();
    expire(*job);
  }
  // Every job's last word, whole or compact, in opening order.
  std::vector<std::pair<std::uint64_t, std::string>> all(order_.begin(), order_.end());
  for (const auto& [key, job] : settled_) all.emplace_back(std::uint64_t{job.open_seq}, key.text());
  std::sort(all.begin(), all.end());
  for (const auto& [seq, jid] : all) evict(jid, /*early=*/false);
  timers_ = {};
  grace_queue_.clear();
}

}  // namespace salttap::correlator
