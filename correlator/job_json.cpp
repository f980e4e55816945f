#include "correlator/job_json.h"

#include "common/json_writer.h"

namespace salttap::correlator {
namespace {

using json::StringOut;
using json::Writer;

void str(Writer& w, std::string_view s) { json::string(w, s); }
void key(Writer& w, std::string_view k) { json::key(w, k); }

// Names of the minions whose flags satisfy `pred`, at most `cap` of them;
// true when the list was cut.
template <typename Pred>
bool minion_list(Writer& w, const Job& job, const MinionRegistry& reg, std::size_t cap, Pred pred) {
  w.StartArray();
  const std::size_t n = job.for_each_minion(
      pred, [&](MinionId m) { str(w, reg.name(m)); }, cap);
  w.EndArray();
  return n > cap;
}

// One object per (minion, item): the minion's name, then what `fields` writes of the item.
template <typename Item, typename Fields>
void per_minion(Writer& w, const std::vector<std::pair<MinionId, Item>>& items, const MinionRegistry& reg,
                Fields fields) {
  w.StartArray();
  for (const auto& [m, item] : items) {
    w.StartObject();
    key(w, "minion"), str(w, reg.name(m));
    fields(item);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

void append_job_json(std::string& out, const Job& job, const MinionRegistry& reg, const JobJsonOptions& options) {
  StringOut os{out};
  Writer w(os);
  w.StartObject();
  key(w, "jid"), str(w, job.jid);
  key(w, "kind"), str(w, to_string(job.kind));
  key(w, "fun"), str(w, job.fun);
  key(w, "args");
  if (job.args_json.empty())
    w.Null();
  else
    w.RawValue(job.args_json.data(), job.args_json.size(), rapidjson::kArrayType);
  key(w, "user"), str(w, job.user);
  key(w, "tgt"), str(w, job.tgt);
  key(w, "tgt_type"), str(w, job.tgt_type);
  if (!job.rerun_of.empty()) key(w, "rerun_of"), str(w, job.rerun_of);
  if (!job.syndics.empty()) {
    key(w, "syndics");
    w.StartArray();
    for (const auto& s : job.syndics) str(w, s);
    w.EndArray();
  }
  key(w, "started_at"), str(w, format_utc(job.started_at));
  key(w, "settled_at");
  if (job.settled)
    str(w, format_utc(job.settled_at));
  else
    w.Null();
  key(w, "status"), str(w, to_string(job.status()));

  const bool with_minions = job.kind != JobKind::runner && job.kind != JobKind::wheel;
  std::vector<std::string_view> truncated;
  if (with_minions) {
    key(w, "minions");
    w.StartObject();
    const std::size_t cap = options.list_cap;
    key(w, "expected");
    if (minion_list(w, job, reg, cap, [](std::uint8_t f) { return (f & kExpected) != 0; }))
      truncated.emplace_back("expected");
    key(w, "succeeded");
    if (minion_list(w, job, reg, cap, [](std::uint8_t f) { return (f & kOutcomeMask) == kSucceeded; }))
      truncated.emplace_back("succeeded");
    key(w, "failed");
    if (minion_list(w, job, reg, cap, [](std::uint8_t f) { return (f & kOutcomeMask) == kFailed; }))
      truncated.emplace_back("failed");
    key(w, "missing");
    if (minion_list(w, job, reg, cap, [](std::uint8_t f) { return (f & kOutcomeMask) == kMissing; }))
      truncated.emplace_back("missing");
    key(w, "late");
    if (minion_list(w, job, reg, cap, [](std::uint8_t f) { return (f & kLate) != 0; })) truncated.emplace_back("late");
    w.EndObject();

    key(w, "counts");
    w.StartObject();
    key(w, "expected"), w.Uint64(job.expected);
    key(w, "returned"), w.Uint64(job.succeeded + job.failed);
    key(w, "succeeded"), w.Uint64(job.succeeded);
    key(w, "failed"), w.Uint64(job.failed);
    key(w, "missing"), w.Uint64(job.missing);
    key(w, "late"), w.Uint64(job.late);
    key(w, "pending"), w.Uint64(job.pending);
    w.EndObject();
    if (!truncated.empty()) {
      key(w, "truncated_lists");
      w.StartArray();
      for (auto t : truncated) str(w, t);
      w.EndArray();
    }

    key(w, "failures");
    per_minion(w, job.failures, reg, [&](const std::string& reason) { key(w, "reason"), str(w, reason); });
  } else {
    key(w, "success");
    if (job.outcome_success)
      w.Bool(*job.outcome_success);
    else
      w.Null();
    if (!job.outcome_reason.empty()) key(w, "reason"), str(w, job.outcome_reason);
  }

  if (job.state_run) {
    key(w, "states");
    w.StartObject();
    key(w, "total"), w.Uint64(job.states.total);
    key(w, "succeeded"), w.Uint64(job.states.succeeded);
    key(w, "failed"), w.Uint64(job.states.failed);
    key(w, "changed"), w.Uint64(job.states.changed);
    key(w, "would_change"), w.Uint64(job.states.would_change);
    w.EndObject();
    key(w, "failed_states");
    per_minion(w, job.failed_states, reg, [&](const FailedState& f) {
      key(w, "id"), str(w, f.id);
      key(w, "name"), str(w, f.name);
      key(w, "function"), str(w, f.function);
      key(w, "comment"), str(w, f.comment);
      key(w, "run_num"), w.Int64(f.run_num);
    });
  }
  if (job.progress_events) key(w, "progress_events"), w.Uint64(job.progress_events);
  if (job.updates) key(w, "late_updates"), w.Uint(job.updates);

  key(w, "risk");
  w.StartObject();
  key(w, "level"), str(w, to_string(job.risk.level));
  key(w, "reasons");
  w.StartArray();
  for (const auto& r : job.risk.reasons) str(w, r);
  w.EndArray();
  w.EndObject();
  w.EndObject();
}

}  // namespace salttap::correlator
