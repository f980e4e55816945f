#include "correlator/correlator.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include <fmt/format.h>

#include "common/text.h"
#include "tap/event_to_json.h"
#include "tap/tag.h"

namespace salttap::correlator {
namespace {

using tap::as_string;
using tap::map_find;

constexpr std::size_t kMaxArgsJson = std::size_t{64} * 1024;

std::string string_or_empty(const tap::Event& e, std::string_view key) {
  return std::string(e.string_field(key).value_or(""));
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

std::size_t Correlator::memory_bytes() const {
  std::size_t bytes = minions_.memory_bytes() + jobs_.capacity() * (sizeof(std::string) + sizeof(void*) + 1) +
                      timers_.size() * (sizeof(Timer) + 24) + order_.size() * 64;
  for (const auto& [jid, job] : jobs_) bytes += job->memory_bytes();
  return bytes;
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
    Job* known = what == "ret" ? find_job(jid) : nullptr;
    if (what == "ret" && known == nullptr && is_noise(e)) {
      ++stats_.noise_events;
      on_find_job_ret(minions_.intern(minion), e);
    } else if (what == "new" && is_noise(e)) {
      ++stats_.noise_events;
    } else if (what == "new") {
      on_new(jid, e);
    } else if (what == "ret") {
      on_ret(jid, minion, e, known);
    } else if (what == "prog") {
      ++stats_.progress_events;
      if (Job* job = find_job(jid)) ++job->progress_events;
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

  if (const msgpack::object* list = e.find("minions"); list && list->type == msgpack::type::ARRAY) {
    std::vector<MinionId> ids;
    ids.reserve(list->via.array.size);
    for (std::uint32_t i = 0; i < list->via.array.size; ++i)
      if (auto name = as_string(list->via.array.ptr[i])) ids.push_back(minions_.intern(*name));
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    job.expect(ids);
  }
  // `missing`: list-target entries without an accepted key; the CLI reports
  // them failed. On a master of masters they are the syndics' minions,
  // expected like the others.
  const msgpack::object* missing_list = e.find("missing");
  if (missing_list && missing_list->type == msgpack::type::ARRAY && config_.order_masters) {
    const msgpack::object* list = missing_list;
    std::vector<MinionId> ids;
    for (std::uint32_t i = 0; i < list->via.array.size; ++i)
      if (auto name = as_string(list->via.array.ptr[i])) ids.push_back(minions_.intern(*name));
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    job.expect(ids);
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
  std::vector<MinionId> ids;
  for (std::uint32_t i = 0; i < list->via.array.size; ++i)
    if (auto name = as_string(list->via.array.ptr[i])) ids.push_back(minions_.intern(*name));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  job.expect(ids);
  const MinionId sid = minions_.intern(syndic);
  if (std::binary_search(ids.begin(), ids.end(), sid)) return;  // also a minion below itself
  if (const auto s = job.find(sid); s && (job.flags[*s] & kOutcomeMask) == kPending) {
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
    Job* found = find_job(jid);
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
    if (Job* job = find_job(jid)) ++job->progress_events;
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
  timers_.emplace(at, job.jid);
}

void Correlator::advance() {
  const Micros now = clock_.now();
  while (!timers_.empty() && timers_.top().first <= now) {
    const auto [at, jid] = timers_.top();
    timers_.pop();
    Job* job = find_job(jid);
    if (!job || job->next_check != at) continue;  // stale timer
    ++revision_;
    if (job->settled)
      evict(jid, /*early=*/false);
    else
      expire(*job);
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

void Correlator::settle(Job& job) {
  job.settled = true;
  job.settled_at = clock_.now();
  ++stats_.jobs_settled;
  sink_(JobUpdate::settled, job);
  schedule(job, job.settled_at + config_.late_grace);
}

void Correlator::evict(const std::string& jid, bool early) {
  auto it = jobs_.find(absl::string_view(jid));
  if (it == jobs_.end()) return;
  sink_(JobUpdate::final, *it->second);
  if (early) ++stats_.evicted_jobs;
  order_.erase(it->second->open_seq);
  jobs_.erase(it);
}

void Correlator::enforce_cap() {
  while (jobs_.size() > config_.max_jobs && !order_.empty()) {
    const std::string jid = order_.begin()->second;
    Job& job = *find_job(jid);
    if (!job.settled) {
      // Out of room before its deadline: what is still pending is reported missing.
      for (auto& f : job.flags) {
        if ((f & kOutcomeMask) != kPending) continue;
        f = static_cast<std::uint8_t>((f & ~kOutcomeMask) | kMissing);
        ++job.missing;
        ++stats_.missing_minions;
      }
      job.pending = 0;
      settle(job);
    }
    evict(jid, /*early=*/true);
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
  while (!order_.empty()) evict(order_.begin()->second, /*early=*/false);
  timers_ = {};
}

}  // namespace salttap::correlator
