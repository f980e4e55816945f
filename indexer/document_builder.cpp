#include "indexer/document_builder.h"

#include <algorithm>

#include "common/json_writer.h"
#include "common/text.h"
#include "correlator/job_json.h"
#include "correlator/run_kind.h"
#include "indexer/internal/document_ids.h"
#include "indexer/internal/document_json.h"
#include "tap/event_to_json.h"
#include "tap/tag.h"

namespace salttap::indexer {
namespace {

using correlator::Job;
using correlator::JobUpdate;
using json::StringOut;
using json::Writer;
using tap::as_string;
using tap::map_find;

// Each comma-separated function of a (possibly multi-function) job.
template <typename Fn>
bool any_function(std::string_view funs, Fn fn) {
  while (true) {
    const std::size_t comma = funs.find(',');
    if (fn(funs.substr(0, comma))) return true;
    if (comma == std::string_view::npos) return false;
    funs.remove_prefix(comma + 1);
  }
}

// A document's string with room for its fixed part (the action line, the
// common and job fields) and `body` bytes more: allocated once, where
// appending would double it up from 15 bytes, a copy at every step.
constexpr std::size_t kDocumentHead = 768;
std::string new_document(std::size_t body = 0) {
  std::string doc;
  doc.reserve(kDocumentHead + body);
  return doc;
}

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

DocumentBuilder::DocumentBuilder(DocumentOptions options, std::shared_ptr<const correlator::Redactor> redactor,
                                 const Clock& clock)
    : options_(std::move(options)), redactor_(std::move(redactor)), clock_(clock) {
  compile_globs();
}

void DocumentBuilder::compile_globs() {
  events_include_ = GlobList(options_.events_include);
  events_exclude_ = GlobList(options_.events_exclude);
  functions_blacklist_ = GlobList(options_.functions_blacklist);
  functions_whitelist_ = GlobList(options_.functions_whitelist);
}

void DocumentOptions::take_reloadable(const DocumentOptions& next) {
  events = next.events;
  events_include = next.events_include;
  events_exclude = next.events_exclude;
  functions_blacklist = next.functions_blacklist;
  functions_whitelist = next.functions_whitelist;
  text_cap = next.text_cap;
}

void DocumentBuilder::reconfigure(const DocumentOptions& next, std::shared_ptr<const correlator::Redactor> redactor) {
  options_.take_reloadable(next);
  compile_globs();
  redactor_ = std::move(redactor);
}

std::vector<BulkDoc> DocumentBuilder::take_docs() {
  std::vector<BulkDoc> out;
  out.swap(docs_);
  return out;
}

void DocumentBuilder::push(DocClass cls, std::string&& ndjson) {
  ++stats_.built[static_cast<std::size_t>(cls)];
  docs_.push_back(BulkDoc{cls, std::move(ndjson)});
}

void DocumentBuilder::action(std::string& doc, std::string_view index, std::string_view id,
                             std::int64_t version) const {
  StringOut os{doc};
  Writer w(os);
  w.StartObject();
  json::key(w, version ? "index" : "create");
  w.StartObject();
  json::key(w, "_index"), json::string(w, index);
  json::key(w, "_id"), json::string(w, id);
  if (version) {
    json::key(w, "version"), w.Int64(version);
    json::key(w, "version_type"), json::string(w, "external");
  }
  w.EndObject();
  w.EndObject();
  doc.push_back('\n');
}

bool DocumentBuilder::indexes_job(const Job& job) const {
  const GlobList& black = functions_blacklist_;
  const GlobList& white = functions_whitelist_;
  if (!white.empty() && !any_function(job.fun, [&](std::string_view f) { return white.matches_any(f); })) return false;
  if (black.empty() || job.fun.empty()) return true;
  // Skipped only when every function of the job is blacklisted.
  return any_function(job.fun, [&](std::string_view f) { return !black.matches_any(f); });
}

// ---- jobs -----------------------------------------------------------------

void DocumentBuilder::job_opened(const Job& job) {
  if (!options_.jobs) return;
  if (!indexes_job(job)) {
    ++stats_.skipped_by_function;
    return;
  }
  write_job(job, "opened", 0);
}

void DocumentBuilder::on_job(JobUpdate update, const Job& job) {
  if (!indexes_job(job)) {
    ++stats_.skipped_by_function;
    return;
  }
  if (options_.jobs) {
    switch (update) {
      case JobUpdate::settled:
        write_job(job, "settled", 1);
        break;
      case JobUpdate::updated:
        write_job(job, "updated", 2);
        break;
      case JobUpdate::final:
        write_job(job, "final", 3);
        break;
    }
  }
  if (update == JobUpdate::settled && options_.returns) write_missing_returns(job);
}

void DocumentBuilder::write_job(const Job& job, std::string_view update, unsigned rank) {
  std::string doc = new_document(std::size_t{32} * std::min(job.minions.size(), options_.list_cap));
  // External version: emission time x 4 + rank, so a later emission always
  // wins, also across restarts, and settled/final at the same instant order.
  // From the job cache: the jid's time x 4 + rank, below every live version.
  // The opened document (rank 0) counts from the jid's time too, when that
  // is earlier: it holds the load alone, so when salttap stops before the
  // job settles, the verdict the job cache gives it (jid time x 4 + 1 or 3)
  // replaces it instead of leaving the job `running` for ever.
  const Micros jid_time = job_index_time(job.jid, job.started_at);
  Micros version_time = options_.job_versions == JobVersionClock::jid ? jid_time : clock_.now();
  if (rank == 0) version_time = std::min(version_time, jid_time);
  const std::int64_t version = version_time * 4 + rank;
  action(doc, options_.layout.index_name("jobs", job_index_time(job.jid, job.started_at)),
         document_id({options_.master_id, job.jid}), std::max<std::int64_t>(version, 1));

  // The summary object (correlator/job_json.h) with the indexing fields
  // spliced in front of its first key.
  scratch_.clear();
  correlator::append_job_json(scratch_, job, *minions_, {.list_cap = options_.list_cap});
  {
    StringOut os{doc};
    Writer w(os);
    w.StartObject();
    write_common(w, "jobs", job.started_at, options_.master_id, options_.fleet());
    json::key(w, "update"), json::string(w, update);
    if (job.settled)
      json::key(w, "duration_ms"), w.Double(static_cast<double>(job.settled_at - job.started_at) / 1000.0);
    if (!job.args_json.empty()) json::key(w, "args_text"), bounded_string(w, job.args_json, options_.text_cap);
    if (!job.failed_states.empty()) {
      json::key(w, "failed_state_ids");
      w.StartArray();
      std::vector<std::string_view> ids;
      for (const auto& [m, f] : job.failed_states) ids.push_back(f.id);
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      for (auto id : ids) json::string(w, id);
      w.EndArray();
    }
    // The writer thinks the object is still open; the summary's keys follow.
  }
  doc.push_back(',');
  doc.append(scratch_, 1, std::string::npos);
  doc.push_back('\n');
  push(DocClass::job, std::move(doc));
}

// ---- returns and states ---------------------------------------------------

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
    // The return is written three times (return, return_text escaped, return_flat).
    std::string doc = new_document(scratch_.size() * 3 + scratch_.size() / 4);
    action(doc, options_.layout.index_name("returns", job_index_time(job.jid, job.started_at)),
           document_id({options_.master_id, job.jid, name}), kReturnVersion);
    StringOut os{doc};
    Writer w(os);
    w.StartObject();
    write_common(w, "returns", stamp, options_.master_id, options_.fleet());
    write_job_fields(w, job, name);
    json::key(w, "status"), json::string(w, analysis.failed ? "failed" : "succeeded");
    if (analysis.failed) json::key(w, "reason"), bounded_string(w, analysis.reason, options_.text_cap);
    if (const msgpack::object* s = ret.find("success"); s && s->type == msgpack::type::BOOLEAN)
      json::key(w, "success"), w.Bool(s->via.boolean);
    if (analysis.retcode) json::key(w, "retcode"), w.Int64(*analysis.retcode);
    json::key(w, "late"), w.Bool(late);
    // From the minion's own fun_args: a scheduled or orphan return has no
    // `new` to read them from.
    const correlator::RunKind kind = correlator::run_kind(job.fun, ret.find("fun_args"));
    json::key(w, "test"), w.Bool(kind.test);
    json::key(w, "highstate"), w.Bool(kind.highstate);
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
                        std::string doc = new_document();
                        action(doc, options_.layout.index_name("returns", job_index_time(job.jid, job.started_at)),
                               document_id({options_.master_id, job.jid, name}), kMissingVersion);
                        StringOut os{doc};
                        Writer w(os);
                        w.StartObject();
                        write_common(w, "returns", job.settled_at, options_.master_id,
                                     options_.fleet());  // when it was declared missing
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
    write_common(w, "states", stamp, options_.master_id, options_.fleet());
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

// ---- alerts ---------------------------------------------------------------

void DocumentBuilder::on_alert(const correlator::Alert& alert) {
  if (!options_.alerts) return;
  std::string doc;
  // A job's alert is one per job; a spool_full alert one per episode (its
  // start time); an episode's alerts share the episode's document, versioned.
  const std::string id =
      !alert.doc_key.empty() ? document_id({options_.master_id, alert.doc_key})
      : alert.jid.empty()
          ? document_id({options_.master_id, correlator::to_string(alert.kind), std::to_string(alert.started_at)})
          : document_id({options_.master_id, alert.jid, "alert"});
  action(doc, options_.layout.index_name("alerts", job_index_time(alert.jid, alert.started_at)), id,
         alert.doc_key.empty() ? 0 : alert.doc_version);
  {
    StringOut os{doc};
    Writer w(os);
    w.StartObject();
    json::key(w, "@timestamp"), json::string(w, format_utc(alert.settled_at));
    json::key(w, "salttap");
    write_salttap_meta(w, "alerts");
    if (alert.json.find("\"master\":") == std::string::npos)
      json::key(w, "master"), json::string(w, options_.master_id);
    json::key(w, "fleet"), json::string(w, options_.fleet());
  }
  doc.push_back(',');
  doc.append(alert.json, 1, std::string::npos);
  doc.push_back('\n');
  push(DocClass::alert, std::move(doc));
}

// ---- entities -------------------------------------------------------------

void DocumentBuilder::on_minion_entity(std::string_view minion, std::int64_t version, Micros updated_at,
                                       std::string_view json) {
  std::string doc = new_document(json.size());
  action(doc, options_.layout.entity_index("minions"), document_id({options_.master_id, minion}),
         std::max<std::int64_t>(version, 1));
  {
    StringOut os{doc};
    Writer w(os);
    w.StartObject();
    json::key(w, "@timestamp"), json::string(w, format_utc(updated_at));
    json::key(w, "salttap");
    write_salttap_meta(w, "minions");
    json::key(w, "fleet"), json::string(w, options_.fleet());
  }
  doc.push_back(',');
  doc.append(json, 1, std::string::npos);
  doc.push_back('\n');
  push(DocClass::entity, std::move(doc));
}

// ---- raw events -----------------------------------------------------------

void DocumentBuilder::on_event(const tap::Event& e) {
  if (!options_.events) return;
  const std::string_view tag = e.tag();
  if (!events_include_.matches_any(tag) || events_exclude_.matches_any(tag)) {
    ++stats_.events_filtered;
    return;
  }
  msgpack::zone zone;
  std::size_t redactions = 0;
  const msgpack::object data = redactor_ ? redactor_->redact(e.data(), zone, &redactions) : e.data();
  stats_.redactions += redactions;
  scratch_.clear();
  tap::append_msgpack_json(scratch_, data);

  const auto stamp_text = e.string_field("_stamp");
  const Micros stamp = (stamp_text ? parse_salt_stamp(*stamp_text) : std::nullopt).value_or(clock_.now());
  std::string doc = new_document(scratch_.size() * 2 + scratch_.size() / 4);  // data, data_text escaped
  action(doc, options_.layout.index_name("events", stamp),
         document_id({options_.master_id, xxh128_hex({tag, stamp_text.value_or(""), scratch_})}), 0);
  StringOut os{doc};
  Writer w(os);
  w.StartObject();
  write_common(w, "events", stamp, options_.master_id, options_.fleet());
  json::key(w, "tag"), utf8_string(w, tag);
  if (tag.starts_with("salt/job/") || tag.starts_with("salt/run/") || tag.starts_with("salt/wheel/"))
    json::key(w, "jid"), utf8_string(w, tap::tag_part(tag, 2));
  if (auto id = e.string_field("id")) json::key(w, "minion"), utf8_string(w, *id);
  if (auto fun = e.string_field("fun")) json::key(w, "fun"), utf8_string(w, *fun);
  json::key(w, "data"), w.RawValue(scratch_.data(), scratch_.size(), rapidjson::kObjectType);
  json::key(w, "data_text"), bounded_string(w, scratch_, options_.text_cap);
  w.EndObject();
  doc.push_back('\n');
  push(DocClass::event, std::move(doc));
}

}  // namespace salttap::indexer
