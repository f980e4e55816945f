// DocumentBuilder, part two: the returns index (one document per job and
// minion, missing minions included) and the states index (one per state).
#include <algorithm>

#include "common/json_writer.h"
#include "indexer/document_builder.h"
#include "indexer/document_ids.h"
#include "indexer/document_json.h"
#include "tap/event_json.h"

namespace salttap::indexer {
namespace {

using correlator::Job;
using json::StringOut;
using json::Writer;
using tap::as_string;
using tap::map_find;

// flattened's default depth_limit is 20: a deeper object would be rejected.
constexpr std::size_t kFlatDepthLimit = 20;
// External versions of a return document: a real return beats "missing".
constexpr std::int64_t kMissingVersion = 1;
constexpr std::int64_t kReturnVersion = 2;

void write_state_counts(Writer& w, const correlator::StateCounts& c) {
  json::key(w, "total"), w.Uint64(c.total);
  json::key(w, "succeeded"), w.Uint64(c.succeeded);
  json::key(w, "failed"), w.Uint64(c.failed);
  json::key(w, "changed"), w.Uint64(c.changed);
  json::key(w, "would_change"), w.Uint64(c.would_change);
}

// The job fields every return and state document repeats (they are what
// people filter returns by).
void write_job_fields(Writer& w, const Job& job, std::string_view minion) {
  json::key(w, "job_started_at"), json::string(w, format_utc(job.started_at));
  json::key(w, "jid"), utf8_string(w, job.jid);
  json::key(w, "minion"), utf8_string(w, minion);
  json::key(w, "fun"), utf8_string(w, job.fun);
  json::key(w, "user"), utf8_string(w, job.user);
  json::key(w, "tgt"), utf8_string(w, job.tgt);
}

// A state key "<module>_|-<id>_|-<name>_|-<function>" -> "module.function".
std::string state_function(std::string_view key) {
  const std::string_view sep = "_|-";
  const std::size_t first = key.find(sep);
  const std::size_t last = key.rfind(sep);
  if (first == std::string_view::npos || last == first) return {};
  return std::string(key.substr(0, first)) + "." + std::string(key.substr(last + sep.size()));
}

double number(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return o.via.f64;
    case msgpack::type::POSITIVE_INTEGER:
      return static_cast<double>(o.via.u64);
    case msgpack::type::NEGATIVE_INTEGER:
      return static_cast<double>(o.via.i64);
    default:
      return 0;
  }
}

}  // namespace

void DocumentBuilder::job_returned(const Job& job, correlator::MinionId minion, const tap::Event& ret,
                                   const correlator::ReturnAnalysis& analysis, bool late) {
  if (!options_.returns && !options_.states) return;
  if (!indexes_job(job)) {
    ++stats_.skipped_by_function;
    return;
  }
  const std::string_view name = minions_->name(minion);
  const auto stamp_text = ret.string_field("_stamp");
  const Micros stamp = (stamp_text ? parse_salt_stamp(*stamp_text) : std::nullopt).value_or(clock_.now());

  // Secrets out first: everything below renders the redacted tree.
  msgpack::zone zone;
  const msgpack::object* raw = ret.find("return");
  msgpack::object value;  // nil when the event has no return
  std::size_t redactions = 0;
  if (raw && redactor_ && redactor_->redacts_whole_return(job.fun)) {
    value = correlator::Redactor::marker();
    ++redactions;
  } else if (raw) {
    value = redactor_ ? redactor_->redact(*raw, zone, &redactions) : *raw;
  }
  stats_.redactions += redactions;

  if (options_.returns) {
    scratch_.clear();
    tap::append_msgpack_json(scratch_, value);
    std::string doc;
    action(doc, options_.layout.index_name("returns", job_index_time(job.jid, job.started_at)),
           document_id({options_.master_id, job.jid, name}), kReturnVersion);
    StringOut os{doc};
    Writer w(os);
    w.StartObject();
    write_common(w, "returns", stamp, options_.master_id);
    write_job_fields(w, job, name);
    json::key(w, "status"), json::string(w, analysis.failed ? "failed" : "succeeded");
    if (analysis.failed) json::key(w, "reason"), bounded_string(w, analysis.reason, options_.text_cap);
    if (const msgpack::object* s = ret.find("success"); s && s->type == msgpack::type::BOOLEAN)
      json::key(w, "success"), w.Bool(s->via.boolean);
    if (analysis.retcode) json::key(w, "retcode"), w.Int64(*analysis.retcode);
    json::key(w, "late"), w.Bool(late);
    if (const msgpack::object* args = ret.find("fun_args")) {
      std::string args_json;
      tap::append_msgpack_json(args_json, redactor_ ? redactor_->redact(*args, zone) : *args);
      json::key(w, "fun_args"), w.RawValue(args_json.data(), args_json.size(), rapidjson::kArrayType);
      json::key(w, "fun_args_text"), bounded_string(w, args_json, options_.text_cap);
    }
    if (analysis.state_run) {
      json::key(w, "states");
      w.StartObject();
      write_state_counts(w, analysis.states);
      w.EndObject();
      if (!analysis.failed_states.empty()) {
        json::key(w, "failed_state_ids");
        w.StartArray();
        for (const auto& f : analysis.failed_states) utf8_string(w, f.id);
        w.EndArray();
      }
    }
    json::key(w, "return"), w.RawValue(scratch_.data(), scratch_.size(), rapidjson::kObjectType);
    json::key(w, "return_text");
    const bool cut = bounded_string(w, scratch_, options_.text_cap);
    if (cut) ++stats_.returns_truncated;
    json::key(w, "return_truncated"), w.Bool(cut);
    if (options_.return_flat && value.type == msgpack::type::MAP && !cut &&
        nesting_depth(value, kFlatDepthLimit) <= kFlatDepthLimit)
      json::key(w, "return_flat"), w.RawValue(scratch_.data(), scratch_.size(), rapidjson::kObjectType);
    w.EndObject();
    doc.push_back('\n');
    push(DocClass::ret, std::move(doc));
  }

  if (options_.states && analysis.state_run && value.type == msgpack::type::MAP)
    write_states(job, name, value, stamp_text.value_or(""));
}

void DocumentBuilder::write_missing_returns(const Job& job) {
  job.for_each_minion([](std::uint8_t f) { return (f & correlator::kOutcomeMask) == correlator::kMissing; },
                      [&](correlator::MinionId m) {
                        const std::string_view name = minions_->name(m);
                        std::string doc;
                        action(doc, options_.layout.index_name("returns", job_index_time(job.jid, job.started_at)),
                               document_id({options_.master_id, job.jid, name}), kMissingVersion);
                        StringOut os{doc};
                        Writer w(os);
                        w.StartObject();
                        write_common(w, "returns", job.settled_at, options_.master_id);  // when it was declared missing
                        write_job_fields(w, job, name);
                        json::key(w, "status"), json::string(w, "missing");
                        json::key(w, "reason"), json::string(w, "no return before the deadline");
                        w.EndObject();
                        doc.push_back('\n');
                        push(DocClass::ret, std::move(doc));
                      });
}

void DocumentBuilder::write_states(const Job& job, std::string_view minion, const msgpack::object& states,
                                   std::string_view stamp_text) {
  const Micros stamp = parse_salt_stamp(stamp_text).value_or(clock_.now());
  const std::string index = options_.layout.index_name("states", job_index_time(job.jid, job.started_at));
  std::string changes;
  for (std::uint32_t i = 0; i < states.via.map.size; ++i) {
    const auto& kv = states.via.map.ptr[i];
    const auto key = as_string(kv.key);
    if (!key || kv.val.type != msgpack::type::MAP) continue;
    const msgpack::object& st = kv.val;
    std::string doc;
    action(doc, index, document_id({options_.master_id, job.jid, minion, xxh128_hex(*key)}), 0);
    StringOut os{doc};
    Writer w(os);
    w.StartObject();
    write_common(w, "states", stamp, options_.master_id);
    write_job_fields(w, job, minion);
    json::key(w, "state_key"), bounded_string(w, *key, 1024);
    if (const auto* id = map_find(st, "__id__"); id && as_string(*id))
      json::key(w, "state_id"), utf8_string(w, *as_string(*id));
    if (const auto* n = map_find(st, "name"); n && as_string(*n))
      json::key(w, "name"), bounded_string(w, *as_string(*n), 1024);
    json::key(w, "function"), utf8_string(w, state_function(*key));
    if (const auto* sls = map_find(st, "__sls__"); sls && as_string(*sls))
      json::key(w, "sls"), utf8_string(w, *as_string(*sls));
    const msgpack::object* result = map_find(st, "result");
    json::key(w, "result");
    std::string_view outcome = "would_change";
    if (result && result->type == msgpack::type::BOOLEAN) {
      w.Bool(result->via.boolean);
      outcome = result->via.boolean ? "succeeded" : "failed";
    } else {
      w.Null();  // test=True: would change
    }
    json::key(w, "outcome"), json::string(w, outcome);
    const msgpack::object* ch = map_find(st, "changes");
    const bool changed = ch && ((ch->type == msgpack::type::MAP && ch->via.map.size > 0) ||
                                (ch->type == msgpack::type::ARRAY && ch->via.array.size > 0));
    json::key(w, "changed"), w.Bool(changed);
    if (const auto* c = map_find(st, "comment")) {
      std::string comment;
      if (auto s = as_string(*c))
        comment = *s;
      else
        tap::append_msgpack_json(comment, *c);  // a list of lines
      json::key(w, "comment"), bounded_string(w, comment, options_.text_cap);
    }
    if (ch) {
      changes.clear();
      tap::append_msgpack_json(changes, *ch);
      json::key(w, "changes"), w.RawValue(changes.data(), changes.size(), rapidjson::kObjectType);
      json::key(w, "changes_text"), bounded_string(w, changes, options_.text_cap);
    }
    if (const auto* d = map_find(st, "duration")) json::key(w, "duration_ms"), w.Double(number(*d));
    if (const auto* t = map_find(st, "start_time"); t && as_string(*t))
      json::key(w, "start_time"), utf8_string(w, *as_string(*t));
    if (const auto* r = map_find(st, "__run_num__"))
      json::key(w, "run_num"), w.Int64(static_cast<std::int64_t>(number(*r)));
    w.EndObject();
    doc.push_back('\n');
    push(DocClass::state, std::move(doc));
  }
}

}  // namespace salttap::indexer
