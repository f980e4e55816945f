#include "history/search_response.h"

#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/json_value.h"

namespace salttap::history {
namespace {

using Value = rapidjson::Value;
using json::member;

// Quoted text from the engine: control characters become spaces (one line),
// cut at a character boundary.
std::string one_line(std::string_view text, std::size_t max = 200) {
  std::size_t cut = std::min(text.size(), max);
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string out;
  for (const char c : text.substr(0, cut)) out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  if (cut < text.size()) out += "…";
  return out;
}

SearchError fail(SearchProblem problem, std::string message) { return {problem, std::move(message)}; }

const Value* path(const Value& v, std::initializer_list<const char*> names) {
  const Value* at = &v;
  for (const char* name : names)
    if (!(at = member(*at, name))) return nullptr;
  return at;
}

// A keyword field: a string, or a list of strings joined with ','.
std::string text(const Value& object, std::initializer_list<const char*> names) {
  const Value* v = path(object, names);
  if (!v) return {};
  if (v->IsString()) return {v->GetString(), v->GetStringLength()};
  std::string out;
  if (v->IsArray())
    for (const auto& e : v->GetArray())
      if (e.IsString()) {
        if (!out.empty()) out += ',';
        out.append(e.GetString(), e.GetStringLength());
      }
  return out;
}

std::vector<std::string> strings(const Value& object, std::initializer_list<const char*> names) {
  std::vector<std::string> out;
  const Value* v = path(object, names);
  if (v && v->IsString()) out.emplace_back(v->GetString(), v->GetStringLength());
  if (v && v->IsArray())
    for (const auto& e : v->GetArray())
      if (e.IsString()) out.emplace_back(e.GetString(), e.GetStringLength());
  return out;
}

std::optional<std::int64_t> integer(const Value& object, std::initializer_list<const char*> names) {
  const Value* v = path(object, names);
  if (v && v->IsInt64()) return v->GetInt64();
  return std::nullopt;
}

std::uint64_t count(const Value& object, std::initializer_list<const char*> names) {
  const Value* v = path(object, names);
  return v && v->IsUint64() ? v->GetUint64() : 0;
}

// The answer's HTTP status and body, checked; `doc` holds the parsed body.
std::optional<SearchError> check_answer(const http::HttpResponse& r, rapidjson::Document& doc) {
  const std::string host = r.host.empty() ? "the engine" : r.host;
  if (r.status == 0)
    // The client's error names the host it tried last.
    return fail(SearchProblem::unreachable,
                fmt::format("cannot reach the engine: {}", one_line(r.error.empty() ? host + ": no answer" : r.error)));
  doc.Parse(r.body.data(), r.body.size());
  if (r.status < 200 || r.status > 299) {
    std::string type = doc.HasParseError() ? std::string{} : text(doc, {"error", "type"});
    std::string reason = doc.HasParseError() ? one_line(r.body) : text(doc, {"error", "reason"});
    if (r.status == 404 && type == "index_not_found_exception")
      return fail(SearchProblem::no_indices,
                  fmt::format("{} holds no salttap indices yet ({})", one_line(host), one_line(reason)));
    return fail(SearchProblem::refused, fmt::format("{} answered {}: {}{}{}", one_line(host), r.status, one_line(type),
                                                    type.empty() ? "" : ": ", one_line(reason)));
  }
  if (doc.HasParseError() || !doc.IsObject())
    return fail(SearchProblem::bad_answer, fmt::format("{} answered {} with something other than a search result: {}",
                                                       one_line(host), r.status, one_line(r.body)));
  if (const Value* shards = path(doc, {"_shards", "total"}); shards && shards->IsUint64() && shards->GetUint64() == 0)
    return fail(SearchProblem::no_indices, fmt::format("{} holds no salttap indices yet", one_line(host)));
  if (const Value* failed = path(doc, {"_shards", "failed"}); failed && failed->IsUint64() && failed->GetUint64() > 0) {
    const Value* failures = path(doc, {"_shards", "failures"});
    std::string reason = failures && failures->IsArray() && !failures->Empty()
                             ? text((*failures)[0], {"reason", "reason"})
                             : std::string("no reason given");
    return fail(SearchProblem::refused, fmt::format("{}: {} shards failed the search: {}", one_line(host),
                                                    failed->GetUint64(), one_line(reason)));
  }
  return std::nullopt;
}

// The hits of a search answer; `each` gets every hit's `_source`.
template <typename Row, typename Read>
Result<Hits<Row>, SearchError> read_hits(const http::HttpResponse& r, Read read) {
  Hits<Row> out;
  rapidjson::Document doc;
  if (auto error = check_answer(r, doc)) return std::move(*error);
  const Value* hits = path(doc, {"hits", "hits"});
  if (!hits || !hits->IsArray())
    return fail(SearchProblem::bad_answer, fmt::format("{}: the answer has no hits.hits list", one_line(r.host)));
  const auto add = [&](const Value& hit) -> bool {
    const Value* source = member(hit, "_source");
    if (!source || !source->IsObject()) return false;
    Row row = read(*source);
    row.source = json::to_text(*source);
    out.rows.push_back(std::move(row));
    return true;
  };
  for (const auto& hit : hits->GetArray()) {
    // A collapsed hit stands for its group: its inner hits are the rows.
    const Value* inner = path(hit, {"inner_hits", kCollapsedHits, "hits", "hits"});
    bool ok = true;
    if (inner && inner->IsArray() && !inner->Empty()) {
      for (const auto& each : inner->GetArray()) ok = ok && add(each);
    } else {
      ok = add(hit);
    }
    if (!ok)
      return fail(SearchProblem::bad_answer, fmt::format("{}: a hit without a _source object", one_line(r.host)));
  }
  const Value* total = path(doc, {"hits", "total"});
  if (total && total->IsObject()) total = member(*total, "value");  // 7+: {"value": N, "relation": ...}
  out.total = total && total->IsUint64() ? total->GetUint64() : out.rows.size();
  return out;
}

JobRow read_job(const Value& s) {
  JobRow j;
  j.jid = text(s, {"jid"});
  j.status = text(s, {"status"});
  j.fun = text(s, {"fun"});
  j.tgt = text(s, {"tgt"});
  j.user = text(s, {"user"});
  j.started_at = text(s, {"started_at"});
  j.risk = text(s, {"risk", "level"});
  j.kind = text(s, {"kind"});
  j.master = text(s, {"master"});
  j.args_text = text(s, {"args_text"});
  j.fleet = text(s, {"fleet"});
  if (j.fleet.empty()) j.fleet = j.master;
  j.expected_list = strings(s, {"minions", "expected"});
  j.succeeded_list = strings(s, {"minions", "succeeded"});
  j.failed_list = strings(s, {"minions", "failed"});
  j.missing_list = strings(s, {"minions", "missing"});
  j.late_list = strings(s, {"minions", "late"});
  j.syndics = strings(s, {"syndics"});
  j.truncated = !strings(s, {"truncated_lists"}).empty();
  j.late = integer(s, {"counts", "late"}).value_or(0);
  j.pending = integer(s, {"counts", "pending"}).value_or(0);
  j.expected = integer(s, {"counts", "expected"}).value_or(0);
  j.returned = integer(s, {"counts", "returned"}).value_or(0);
  j.succeeded = integer(s, {"counts", "succeeded"}).value_or(0);
  j.failed = integer(s, {"counts", "failed"}).value_or(0);
  j.missing = integer(s, {"counts", "missing"}).value_or(0);
  if (const Value* states = member(s, "failed_states"); states && states->IsArray())
    for (const auto& f : states->GetArray())
      if (f.IsObject())
        j.failed_states.push_back({text(f, {"minion"}), text(f, {"id"}), text(f, {"function"}), text(f, {"comment"})});
  return j;
}

ReturnRow read_return(const Value& s) {
  ReturnRow r;
  r.minion = text(s, {"minion"});
  r.status = text(s, {"status"});
  r.reason = text(s, {"reason"});
  r.return_text = text(s, {"return_text"});
  r.master = text(s, {"master"});
  if (const Value* late = member(s, "late"); late && late->IsBool()) r.late = late->GetBool();
  r.retcode = integer(s, {"retcode"});
  if (const Value* ids = member(s, "failed_state_ids"); ids && ids->IsArray())
    for (const auto& id : ids->GetArray())
      if (id.IsString()) r.failed_state_ids.emplace_back(id.GetString(), id.GetStringLength());
  return r;
}

}  // namespace

Result<Hits<JobRow>, SearchError> parse_job_hits(const http::HttpResponse& response) {
  return read_hits<JobRow>(response, read_job);
}

Result<Hits<ReturnRow>, SearchError> parse_return_hits(const http::HttpResponse& response) {
  return read_hits<ReturnRow>(response, read_return);
}

Result<MinionPage, SearchError> parse_minion_page(const http::HttpResponse& r) {
  MinionPage page;
  rapidjson::Document doc;
  if (auto error = check_answer(r, doc)) return std::move(*error);
  const Value* agg = path(doc, {"aggregations", "minions"});
  const Value* buckets = agg ? member(*agg, "buckets") : nullptr;
  if (!buckets || !buckets->IsArray())
    return fail(SearchProblem::bad_answer,
                fmt::format("{}: the answer has no aggregations.minions.buckets list", one_line(r.host)));
  for (const auto& b : buckets->GetArray()) {
    MinionRow row;
    row.minion = text(b, {"key", "minion"});
    const Value* jobs = member(b, "doc_count");
    if (row.minion.empty() || !jobs || !jobs->IsUint64())
      return fail(SearchProblem::bad_answer,
                  fmt::format("{}: a minion bucket without key.minion or doc_count", one_line(r.host)));
    row.jobs = jobs->GetUint64();
    row.succeeded = count(b, {"succeeded", "doc_count"});
    row.failed = count(b, {"failed", "doc_count"});
    row.missing = count(b, {"missing", "doc_count"});
    row.last_seen = text(b, {"answered", "last", "value_as_string"});
    page.rows.push_back(std::move(row));
  }
  // The engine sends after_key with the last bucket of every page but may
  // send one after the last page too: an empty page ends the paging.
  if (const Value* after = member(*agg, "after_key"); after && after->IsObject() && !page.rows.empty())
    page.after_key = json::to_text(*after);
  return page;
}

}  // namespace salttap::history
