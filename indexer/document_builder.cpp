#include "indexer/document_builder.h"

#include <algorithm>

#include "common/json_writer.h"
#include "common/text.h"
#include "correlator/job_json.h"
#include "indexer/document_ids.h"
#include "indexer/document_json.h"
#include "tap/event_json.h"
#include "tap/tag.h"

namespace salttap::indexer {
namespace {

using correlator::Job;
using correlator::JobUpdate;
using json::StringOut;
using json::Writer;

bool matches_any(const std::vector<std::string>& globs, std::string_view text) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return glob_match(g, text); });
}

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

}  // namespace

DocumentBuilder::DocumentBuilder(DocumentOptions options, std::shared_ptr<const correlator::Redactor> redactor,
                                 const Clock& clock)
    : options_(std::move(options)), redactor_(std::move(redactor)), clock_(clock) {}

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
  const auto& black = options_.functions_blacklist;
  const auto& white = options_.functions_whitelist;
  if (!white.empty() && !any_function(job.fun, [&](std::string_view f) { return matches_any(white, f); })) return false;
  if (black.empty() || job.fun.empty()) return true;
  // Skipped only when every function of the job is blacklisted.
  return any_function(job.fun, [&](std::string_view f) { return !matches_any(black, f); });
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
  std::string doc;
  // External version: emission time x 4 + rank, so a later emission always
  // wins, also across restarts, and settled/final at the same instant order.
  // From the job cache: the jid's time x 4 + rank, below every live version.
  const Micros version_time =
      options_.job_versions == JobVersionClock::jid ? job_index_time(job.jid, job.started_at) : clock_.now();
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
    write_common(w, "jobs", job.started_at, options_.master_id);
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

// ---- alerts ---------------------------------------------------------------

void DocumentBuilder::on_alert(const correlator::Alert& alert) {
  if (!options_.alerts) return;
  std::string doc;
  // A job's alert is one per job; a spool_full alert one per episode (its start time).
  action(doc, options_.layout.index_name("alerts", job_index_time(alert.jid, alert.started_at)),
         alert.jid.empty()
             ? document_id({options_.master_id, correlator::to_string(alert.kind), std::to_string(alert.started_at)})
             : document_id({options_.master_id, alert.jid, "alert"}),
         0);
  {
    StringOut os{doc};
    Writer w(os);
    w.StartObject();
    json::key(w, "@timestamp"), json::string(w, format_utc(alert.settled_at));
    json::key(w, "salttap");
    write_salttap_meta(w, "alerts");
    if (alert.json.find("\"master\":") == std::string::npos)
      json::key(w, "master"), json::string(w, options_.master_id);
  }
  doc.push_back(',');
  doc.append(alert.json, 1, std::string::npos);
  doc.push_back('\n');
  push(DocClass::alert, std::move(doc));
}

// ---- raw events -----------------------------------------------------------

void DocumentBuilder::on_event(const tap::Event& e) {
  if (!options_.events) return;
  const std::string_view tag = e.tag();
  if (!matches_any(options_.events_include, tag) || matches_any(options_.events_exclude, tag)) {
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
  std::string doc;
  action(doc, options_.layout.index_name("events", stamp),
         document_id({options_.master_id, xxh128_hex({tag, stamp_text.value_or(""), scratch_})}), 0);
  StringOut os{doc};
  Writer w(os);
  w.StartObject();
  write_common(w, "events", stamp, options_.master_id);
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
