#include "correlator/alert.h"

#include "common/clock.h"
#include "common/enum_names.h"
#include "common/json_writer.h"

namespace salttap::correlator {
namespace {

using json::StringOut;
using json::Writer;

void str(Writer& w, std::string_view s) { json::string(w, s); }

void names(Writer& w, const Job& job, const MinionRegistry& reg, std::uint8_t outcome, std::size_t cap) {
  w.StartArray();
  job.for_each_minion([&](std::uint8_t f) { return (f & kOutcomeMask) == outcome; },
                      [&](MinionId m) { str(w, reg.name(m)); }, cap);
  w.EndArray();
}

}  // namespace

std::string_view to_string(AlertKind kind) { return enumerator_name(kind, "failed"); }

std::optional<Alert> make_alert(const Job& job, const MinionRegistry& reg, const AlertConfig& config,
                                std::string_view master_id) {
  Alert alert;
  const JobStatus status = job.status();
  if (job.evicted != Job::Evicted::none) alert.kinds.push_back(AlertKind::evicted);  // always: nothing else says so
  if (config.on_failed && status == JobStatus::failed) alert.kinds.push_back(AlertKind::failed);
  if (config.on_missing && job.missing > 0) alert.kinds.push_back(AlertKind::missing);
  if (config.min_risk != RiskLevel::none && job.risk.level >= config.min_risk) alert.kinds.push_back(AlertKind::risky);
  if (alert.kinds.empty()) return std::nullopt;
  alert.kind = alert.kinds.front();
  alert.jid = job.jid;
  alert.started_at = job.started_at;
  alert.settled_at = job.settled_at;
  alert.orphan = job.kind == JobKind::orphan;

  StringOut os{alert.json};
  Writer w(os);
  w.StartObject();
  w.Key("alert"), str(w, to_string(alert.kind));
  w.Key("kinds");
  w.StartArray();
  for (auto k : alert.kinds) str(w, to_string(k));
  w.EndArray();
  if (!master_id.empty()) w.Key("master"), str(w, master_id);
  if (job.evicted != Job::Evicted::none)
    w.Key("evicted"), str(w, job.evicted == Job::Evicted::memory_budget ? "memory_budget" : "max_jobs");
  w.Key("jid"), str(w, job.jid);
  w.Key("kind"), str(w, to_string(job.kind));
  w.Key("fun"), str(w, job.fun);
  w.Key("args");
  if (job.args_json.empty())
    w.Null();
  else
    w.RawValue(job.args_json.data(), job.args_json.size(), rapidjson::kArrayType);
  // Only when `args` is not what was published: a re-run must not use it.
  if (job.args_redacted) w.Key("args_redacted"), w.Bool(true);
  w.Key("user"), str(w, job.user);
  w.Key("tgt"), str(w, job.tgt);
  w.Key("tgt_type"), str(w, job.tgt_type);
  if (!job.rerun_of.empty()) w.Key("rerun_of"), str(w, job.rerun_of);
  w.Key("status"), str(w, to_string(status));
  w.Key("started_at"), str(w, format_utc(job.started_at));
  w.Key("settled_at"), str(w, format_utc(job.settled_at));
  w.Key("counts");
  w.StartObject();
  w.Key("expected"), w.Uint64(job.expected);
  w.Key("succeeded"), w.Uint64(job.succeeded);
  w.Key("failed"), w.Uint64(job.failed);
  w.Key("missing"), w.Uint64(job.missing);
  w.EndObject();
  w.Key("failed"), names(w, job, reg, kFailed, config.list_cap);
  w.Key("missing"), names(w, job, reg, kMissing, config.list_cap);
  w.Key("failures");
  w.StartArray();
  for (std::size_t i = 0; i < job.failures.size() && i < config.list_cap; ++i) {
    w.StartObject();
    w.Key("minion"), str(w, reg.name(job.failures[i].first));
    w.Key("reason"), str(w, job.failures[i].second);
    w.EndObject();
  }
  w.EndArray();
  if (job.state_run) {
    w.Key("failed_states");
    w.StartArray();
    for (std::size_t i = 0; i < job.failed_states.size() && i < config.list_cap; ++i) {
      const auto& [m, f] = job.failed_states[i];
      w.StartObject();
      w.Key("minion"), str(w, reg.name(m));
      w.Key("id"), str(w, f.id);
      w.Key("name"), str(w, f.name);
      w.Key("function"), str(w, f.function);
      w.Key("comment"), str(w, f.comment);
      w.Key("run_num"), w.Int64(f.run_num);
      w.EndObject();
    }
    w.EndArray();
  }
  if (!job.outcome_reason.empty()) w.Key("reason"), str(w, job.outcome_reason);
  w.Key("risk");
  w.StartObject();
  w.Key("level"), str(w, to_string(job.risk.level));
  w.Key("reasons");
  w.StartArray();
  for (const auto& r : job.risk.reasons) str(w, r);
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return alert;
}

}  // namespace salttap::correlator
