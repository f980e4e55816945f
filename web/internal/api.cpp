#include "web/internal/api.h"

#include <charconv>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/json_writer.h"
#include "common/log.h"
#include "common/time_bound.h"
#include "history/history_client.h"
#include "history/query_bodies.h"
#include "history/search_response.h"

namespace salttap::web {
namespace {

using json::key;
using json::string;
using json::Writer;

constexpr std::size_t kMaxRows = 1000;

// An id to find an error's details in the log by: random, so one answer says
// nothing about how many errors came before it.
std::string new_error_id() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format("{:016x}", random());
}
constexpr std::string_view kDefaultSince = "7d";

WebResponse json_response(int status, std::string body) {
  return WebResponse{status, "application/json; charset=utf-8", std::move(body), {{"Cache-Control", "no-store"}}};
}

// Every answer is one JSON object: `members` writes what stands between its braces.
template <typename Members>
WebResponse object_response(int status, Members&& members) {
  std::string out;
  json::StringOut sink{out};
  Writer w(sink);
  w.StartObject();
  std::forward<Members>(members)(w);
  w.EndObject();
  return json_response(status, std::move(out));
}

WebResponse error_response(int status, std::string_view message) {
  return object_response(status, [&](Writer& w) {
    key(w, "error");
    string(w, message);
  });
}

constexpr std::string_view kNoIndices = "the engine holds no salttap indices yet";

// The engine's problem: no indices is an empty answer with a note; the rest a
// 502 with a fixed message and an id. The engine's own words name its address,
// so they go to the log only, under the same id.
std::optional<WebResponse> engine_problem(const history::SearchError& e) {
  if (e.problem == history::SearchProblem::no_indices) return std::nullopt;
  const std::string id = new_error_id();
  log::warn("ui: engine error {}: {}", id, e.message);
  return object_response(502, [&](Writer& w) {
    key(w, "error");
    string(w, "the engine could not answer this search (salttap's log has the details under error_id)");
    key(w, "error_id");
    string(w, id);
  });
}

// {"<list>": [], "note": "..."}: the engine holds no salttap indices yet.
WebResponse empty_with_note(std::string_view list) {
  return object_response(200, [&](Writer& w) {
    key(w, list);
    w.StartArray();
    w.EndArray();
    key(w, "note");
    string(w, kNoIndices);
  });
}

// A search that failed: an empty `list` with a note when the engine holds no
// salttap indices yet, a 502 for every other problem.
WebResponse failed_search(std::string_view list, const history::SearchError& e) {
  if (auto problem = engine_problem(e)) return *problem;
  return empty_with_note(list);
}

std::string param(const UiQuery& q, const std::string& name, std::string_view fallback = {}) {
  const auto it = q.find(name);
  return it == q.end() || it->second.empty() ? std::string(fallback) : it->second;
}

// limit: 1..kMaxRows; false and `error` otherwise.
bool read_limit(const UiQuery& q, std::size_t fallback, std::size_t& limit, std::string& error) {
  const std::string text = param(q, "limit");
  limit = fallback;
  if (text.empty()) return true;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
  if (ec != std::errc{} || end != text.data() + text.size() || limit == 0 || limit > kMaxRows) {
    error = fmt::format("limit must be 1 to {}", kMaxRows);
    return false;
  }
  return true;
}

bool read_since(const UiQuery& q, Micros now, std::optional<Micros>& since, std::string& error) {
  const std::string text = param(q, "since", kDefaultSince);
  if (text == "all") return true;
  std::string why;
  since = parse_time_bound(text, now, why);
  if (!since) error = "since: " + why;
  return since.has_value();
}

void number(Writer& w, std::string_view name, std::int64_t n) {
  key(w, name);
  w.Int64(n);
}

void text(Writer& w, std::string_view name, std::string_view value) {
  key(w, name);
  string(w, value);
}

void texts(Writer& w, std::string_view name, const std::vector<std::string>& values) {
  key(w, name);
  w.StartArray();
  for (const auto& v : values) string(w, v);
  w.EndArray();
}

// A member of `_source` (parsed) copied as is, when present.
void copy(Writer& w, const rapidjson::Value& source, const char* name) {
  if (!source.IsObject()) return;
  const auto it = source.FindMember(name);
  if (it == source.MemberEnd()) return;
  key(w, name);
  it->value.Accept(w);
}

rapidjson::Document parsed(const std::string& source) {
  rapidjson::Document doc;
  doc.Parse(source.data(), source.size());
  if (doc.HasParseError()) doc.SetObject();
  return doc;
}

void failed_states(Writer& w, const std::vector<history::FailedState>& states, std::string_view minion) {
  key(w, "failed_states");
  w.StartArray();
  for (const auto& f : states) {
    if (!minion.empty() && f.minion != minion) continue;
    w.StartObject();
    text(w, "minion", f.minion);
    text(w, "id", f.id);
    text(w, "function", f.function);
    text(w, "comment", f.comment);
    w.EndObject();
  }
  w.EndArray();
}

// The job's risk reasons, from its `_source` (parsed).
void risk_reasons(Writer& w, const rapidjson::Value& source) {
  if (source.HasMember("risk") && source["risk"].IsObject()) copy(w, source["risk"], "reasons");
}

// What a job and an alert both say of the job: the fields of its row in a list.
void job_fields(Writer& w, const history::JobRow& j) {
  text(w, "jid", j.jid);
  text(w, "status", j.status);
  text(w, "fun", j.fun);
  text(w, "tgt", j.tgt);
  text(w, "user", j.user);
  text(w, "kind", j.kind);
  text(w, "started_at", j.started_at);
  text(w, "risk", j.risk);
}

// A job row: what the list shows, plus (`detail`) what the job page shows;
// merged across the masters of its fleet (history/job_merge.h).
void job_object(Writer& w, const history::MergedJob& merged, bool detail) {
  const history::JobRow& j = merged.job;
  w.StartObject();
  job_fields(w, j);
  text(w, "fleet", merged.fleet);
  text(w, "publisher", merged.publisher);
  texts(w, "seen_by", merged.seen_by);
  number(w, "expected", j.expected);
  number(w, "returned", j.returned);
  number(w, "succeeded", j.succeeded);
  number(w, "failed", j.failed);
  number(w, "missing", j.missing);
  if (detail) {
    text(w, "master", j.master);
    text(w, "args_text", j.args_text);
    const rapidjson::Document s = parsed(j.source);
    for (const char* name : {"settled_at", "duration_ms", "tgt_type", "reason", "rerun_of", "states"}) copy(w, s, name);
    risk_reasons(w, s);
    failed_states(w, j.failed_states, {});
  }
  w.EndObject();
}

// A return's verdict, as every list of returns shows it.
void verdict_fields(Writer& w, const history::ReturnRow& r) {
  text(w, "status", r.status);
  text(w, "reason", r.reason);
  key(w, "retcode");
  if (r.retcode)
    w.Int64(*r.retcode);
  else
    w.Null();
}

void minion_fields(Writer& w, const history::MinionRow& m) {
  text(w, "minion", m.minion);
  number(w, "jobs", static_cast<std::int64_t>(m.jobs));
  number(w, "succeeded", static_cast<std::int64_t>(m.succeeded));
  number(w, "failed", static_cast<std::int64_t>(m.failed));
  number(w, "missing", static_cast<std::int64_t>(m.missing));
  key(w, "failure_rate");  // failed or missing, of every return in the window
  w.Double(m.jobs == 0 ? 0.0 : static_cast<double>(m.failed + m.missing) / static_cast<double>(m.jobs));
  text(w, "last_seen", m.last_seen);
}

}  // namespace

WebResponse ui_api_jobs(http::HttpClient& http, const indexer::IndexLayout& layout, const UiQuery& query, Micros now) {
  history::JobsArgs args;
  args.status = param(query, "status");
  args.fun = param(query, "fun");
  args.minion = param(query, "minion");
  args.user = param(query, "user");
  args.tgt = param(query, "tgt");
  args.risk = param(query, "risk");
  args.since = param(query, "since");
  args.until = param(query, "until");
  std::string error;
  if (!read_limit(query, 100, args.limit, error)) return error_response(400, error);
  if (!args.status.empty() && args.status != "running" && args.status != "succeeded" && args.status != "failed" &&
      args.status != "missing")
    return error_response(400, "status: expected running, succeeded, failed or missing");
  history::JobQuery q;
  if (!history::make_job_query(args, now, q, error)) {
    // The command line's option names are the API's parameters: "--since must be before --until" -> "since must
    // be before until".
    for (auto at = error.find("--"); at != std::string::npos; at = error.find("--", at)) error.erase(at, 2);
    return error_response(400, error);
  }
  const auto found = history::parse_job_hits(history::search(http, layout, "jobs", history::jobs_search_body(q)));
  if (!found) return failed_search("jobs", found.error());
  return object_response(200, [&](Writer& w) {
    key(w, "jobs");
    w.StartArray();
    for (const auto& j : history::merge_job_rows(found.value().rows)) job_object(w, j, false);
    w.EndArray();
    key(w, "limit");
    w.Uint64(q.limit);
  });
}

WebResponse ui_api_job(http::HttpClient& http, const indexer::IndexLayout& layout, const std::string& jid) {
  if (jid.empty() || jid.size() > 256) return error_response(400, "a jid is 1 to 256 characters");
  const auto found = history::fetch_job(http, layout, jid);
  if (!found) {
    if (auto problem = engine_problem(found.error())) return *problem;
    return error_response(404, fmt::format("no job {}: {}", jid, kNoIndices));
  }
  if (found.value().empty()) return error_response(404, "no job " + jid + " in the engine");
  // Normally one job; more are "same jid, different jobs" (the collision
  // guard, or other fleets): the first here, the count says there are more.
  const history::JobDetail& d = found.value().front();
  return object_response(200, [&](Writer& w) {
    key(w, "job");
    job_object(w, d.merged, true);
    number(w, "masters", static_cast<std::int64_t>(d.merged.seen_by.size()));
    number(w, "jobs_with_this_jid", static_cast<std::int64_t>(found.value().size()));
    key(w, "returns");
    w.StartArray();
    for (const auto& r : d.returns.rows) {
      w.StartObject();
      text(w, "minion", r.minion);
      verdict_fields(w, r);
      text(w, "return_text", r.return_text);
      texts(w, "seen_by", r.seen_by);
      const rapidjson::Document s = parsed(r.source);
      for (const char* name : {"@timestamp", "late", "return_truncated", "states"}) copy(w, s, name);
      // The job keeps a capped list of failed states; the return has its own ids.
      failed_states(w, d.merged.job.failed_states, r.minion);
      texts(w, "failed_state_ids", r.failed_state_ids);
      w.EndObject();
    }
    w.EndArray();
    number(w, "returns_total", static_cast<std::int64_t>(d.returns.total));
  });
}

WebResponse ui_api_minions(http::HttpClient& http, const indexer::IndexLayout& layout, const UiQuery& query,
                           Micros now) {
  std::optional<Micros> since;
  std::string error;
  if (!read_since(query, now, since, error)) return error_response(400, error);
  const auto found = history::fetch_minions(http, layout, since);
  if (!found) return failed_search("minions", found.error());
  return object_response(200, [&](Writer& w) {
    key(w, "minions");
    w.StartArray();
    for (const auto& m : found.value()) {
      w.StartObject();
      minion_fields(w, m);
      w.EndObject();
    }
    w.EndArray();
  });
}

WebResponse ui_api_minion(http::HttpClient& http, const indexer::IndexLayout& layout, const std::string& minion,
                          const UiQuery& query, Micros now) {
  if (minion.empty() || minion.size() > 1024) return error_response(400, "a minion id is 1 to 1024 characters");
  std::optional<Micros> since;
  std::size_t limit = 0;
  std::string error;
  if (!read_since(query, now, since, error) || !read_limit(query, 100, limit, error)) return error_response(400, error);
  const auto stats = history::fetch_minions(http, layout, since, minion);
  if (!stats) return failed_search("returns", stats.error());
  const auto returns = history::parse_return_hits(
      history::search(http, layout, "returns", history::returns_of_minion_body(minion, since, limit)));
  if (!returns) return failed_search("returns", returns.error());
  history::MinionRow row;
  row.minion = minion;
  for (const auto& m : stats.value())
    if (m.minion == minion) row = m;
  return object_response(200, [&](Writer& w) {
    key(w, "minion");
    w.StartObject();
    minion_fields(w, row);
    w.EndObject();
    key(w, "returns");
    w.StartArray();
    for (const auto& r : returns.value().rows) {
      const rapidjson::Document s = parsed(r.source);
      w.StartObject();
      for (const char* name : {"jid", "fun", "job_started_at", "@timestamp", "user", "tgt"}) copy(w, s, name);
      verdict_fields(w, r);
      texts(w, "failed_state_ids", r.failed_state_ids);
      w.EndObject();
    }
    w.EndArray();
  });
}

WebResponse ui_api_alerts(http::HttpClient& http, const indexer::IndexLayout& layout, const UiQuery& query,
                          Micros now) {
  std::optional<Micros> since;
  std::size_t limit = 0;
  std::string error;
  if (!read_since(query, now, since, error) || !read_limit(query, 100, limit, error)) return error_response(400, error);
  const std::string kind = param(query, "kind");
  if (!kind.empty() && kind != "failed" && kind != "missing" && kind != "risky")
    return error_response(400, "kind: expected failed, missing or risky");
  const auto found =
      history::parse_job_hits(history::search(http, layout, "alerts", history::alerts_search_body(since, kind, limit)));
  if (!found) return failed_search("alerts", found.error());
  return object_response(200, [&](Writer& w) {
    key(w, "alerts");
    w.StartArray();
    for (const auto& a : found.value().rows) {
      const rapidjson::Document s = parsed(a.source);
      w.StartObject();
      for (const char* name : {"@timestamp", "alert", "kinds", "settled_at", "failed", "missing", "reason"})
        copy(w, s, name);
      job_fields(w, a);
      risk_reasons(w, s);
      w.EndObject();
    }
    w.EndArray();
  });
}

}  // namespace salttap::web
