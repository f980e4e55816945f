#include "history/query_bodies.h"

#include <rapidjson/document.h>

#include "common/json_writer.h"
#include "history/search_response.h"

namespace salttap::history {
namespace {

constexpr Micros kMicrosPerMinute = 60 * kMicrosPerSecond;

using json::key;
using json::string;
using json::Writer;

constexpr std::string_view kJobMinionLists[] = {"minions.expected", "minions.succeeded", "minions.failed",
                                                "minions.missing", "minions.late"};

// A request body: one JSON object, its members written by `members`.
template <typename Members>
std::string object_body(Members members) {
  std::string out;
  json::StringOut sink{out};
  Writer w(sink);
  w.StartObject();
  members(w);
  w.EndObject();
  return out;
}

// Whether a glob needs a wildcard query; a plain name is a (cheaper) term.
bool has_wildcard(std::string_view glob) { return glob.find_first_of("*?") != std::string_view::npos; }

void match(Writer& w, std::string_view field, std::string_view glob) {
  w.StartObject();
  key(w, has_wildcard(glob) ? "wildcard" : "term");
  w.StartObject();
  key(w, field);
  w.StartObject();
  key(w, "value");
  string(w, glob);
  w.EndObject();
  w.EndObject();
  w.EndObject();
}

void time_range(Writer& w, std::string_view field, std::optional<Micros> since, std::optional<Micros> until) {
  w.StartObject();
  key(w, "range");
  w.StartObject();
  key(w, field);
  w.StartObject();
  // Milliseconds since the epoch: exact for any date field's format.
  if (since) {
    key(w, "gte");
    w.Int64(*since / 1000);
  }
  if (until) {
    key(w, "lt");
    w.Int64(*until / 1000);
  }
  key(w, "format");
  string(w, "epoch_millis");
  w.EndObject();
  w.EndObject();
  w.EndObject();
}

void any_of(Writer& w, std::string_view glob) {
  w.StartObject();
  key(w, "bool");
  w.StartObject();
  key(w, "should");
  w.StartArray();
  for (const auto field : kJobMinionLists) match(w, field, glob);
  w.EndArray();
  key(w, "minimum_should_match");
  w.Int(1);
  w.EndObject();
  w.EndObject();
}

void risk_at_least(Writer& w, correlator::RiskLevel min) {
  w.StartObject();
  key(w, "terms");
  w.StartObject();
  key(w, "risk.level");
  w.StartArray();
  for (int l = static_cast<int>(min); l <= static_cast<int>(correlator::RiskLevel::critical); ++l)
    string(w, correlator::to_string(static_cast<correlator::RiskLevel>(l)));
  w.EndArray();
  w.EndObject();
  w.EndObject();
}

// {"term": {field: value}}
void term(Writer& w, std::string_view field, std::string_view value) {
  w.StartObject();
  key(w, "term");
  w.StartObject();
  key(w, field);
  string(w, value);
  w.EndObject();
  w.EndObject();
}

// "query": {"bool": {"filter": [ what filters() writes ]}}
template <typename Filters>
void filtered_query(Writer& w, Filters&& filters) {
  key(w, "query");
  w.StartObject();
  key(w, "bool");
  w.StartObject();
  key(w, "filter");
  w.StartArray();
  filters();
  w.EndArray();
  w.EndObject();
  w.EndObject();
}

// Every search body opens with its page: `size` hits, and whether the engine
// counts every match (only the page of a job's returns needs the count).
void page(Writer& w, std::uint64_t size, bool track_total_hits) {
  key(w, "size");
  w.Uint64(size);
  key(w, "track_total_hits");
  w.Bool(track_total_hits);
}

void sort_by(Writer& w, std::string_view field, std::string_view order) {
  key(w, "sort");
  w.StartArray();
  w.StartObject();
  key(w, field);
  w.StartObject();
  key(w, "order");
  string(w, order);
  // Returns of a missing minion and jobs in old indices may lack the field.
  key(w, "unmapped_type");
  string(w, field.ends_with("_at") || field == "@timestamp" ? "date" : "keyword");
  w.EndObject();
  w.EndObject();
  w.EndArray();
}

}  // namespace

std::string search_path(const indexer::IndexLayout& layout, std::string_view kind) {
  return "/" + layout.index_pattern(kind) + "/_search";
}

std::string jobs_search_body(const JobQuery& q) {
  return object_body([&](Writer& w) {
    page(w, q.limit, false);
    sort_by(w, "started_at", "desc");
    // One hit per jid, its documents (one per master) as inner hits: a page
    // of `limit` jobs however many masters ran each.
    key(w, "collapse");
    w.StartObject();
    key(w, "field");
    string(w, "jid");
    key(w, "inner_hits");
    w.StartObject();
    key(w, "name");
    string(w, kCollapsedHits);
    key(w, "size");
    w.Int(100);
    sort_by(w, "started_at", "desc");
    w.EndObject();
    w.EndObject();
    filtered_query(w, [&] {
      if (!q.status.empty()) match(w, "status", q.status);
      if (!q.fun.empty()) match(w, "fun", q.fun);
      if (!q.user.empty()) match(w, "user", q.user);
      if (!q.tgt.empty()) match(w, "tgt", q.tgt);
      if (!q.minion.empty()) any_of(w, q.minion);
      if (q.min_risk) risk_at_least(w, *q.min_risk);
      if (q.since || q.until) time_range(w, "started_at", q.since, q.until);
    });
  });
}

std::string job_by_jid_body(std::string_view jid) {
  return object_body([&](Writer& w) {
    key(w, "size");
    w.Int(100);
    sort_by(w, "started_at", "desc");
    filtered_query(w, [&] { term(w, "jid", jid); });
  });
}

std::string returns_of_job_body(std::string_view jid, const std::vector<std::string>& masters) {
  return object_body([&](Writer& w) {
    page(w, kMaxResultWindow, true);
    sort_by(w, "minion", "asc");
    filtered_query(w, [&] {
      term(w, "jid", jid);
      if (!masters.empty()) {
        w.StartObject();
        key(w, "terms");
        w.StartObject();
        key(w, "master");
        w.StartArray();
        for (const auto& m : masters) string(w, m);
        w.EndArray();
        w.EndObject();
        w.EndObject();
      }
    });
  });
}

std::string minions_page_body(std::optional<Micros> since, std::string_view after_key, std::string_view minion,
                              std::size_t page_size) {
  // The window starts at its whole minute: every page a minute asks for is
  // then the same request, which the engine's shard request cache answers
  // for every daily index that has not changed since (all but today's),
  // instead of aggregating each of their returns again.
  std::optional<Micros> from = since;
  if (from) *from -= ((*from % kMicrosPerMinute) + kMicrosPerMinute) % kMicrosPerMinute;
  return object_body([&](Writer& w) {
    const auto status_filter = [&w](std::string_view name, std::string_view status) {
      key(w, name);
      w.StartObject();
      key(w, "filter");
      term(w, "status", status);
      w.EndObject();
    };
    page(w, 0, false);
    if (from || !minion.empty())
      filtered_query(w, [&] {
        if (from) time_range(w, "job_started_at", from, std::nullopt);
        if (!minion.empty()) term(w, "minion", minion);
      });
    key(w, "aggs");
    w.StartObject();
    key(w, "minions");
    w.StartObject();
    key(w, "composite");
    w.StartObject();
    key(w, "size");
    w.Uint64(page_size);
    key(w, "sources");
    w.StartArray();
    w.StartObject();
    key(w, "minion");
    w.StartObject();
    key(w, "terms");
    w.StartObject();
    key(w, "field");
    string(w, "minion");
    w.EndObject();
    w.EndObject();
    w.EndObject();
    w.EndArray();
    if (!after_key.empty()) {
      // The engine's own after_key, passed back verbatim.
      rapidjson::Document after;
      after.Parse(after_key.data(), after_key.size());
      if (!after.HasParseError()) {
        key(w, "after");
        after.Accept(w);
      }
    }
    w.EndObject();
    key(w, "aggs");
    w.StartObject();
    status_filter("succeeded", "succeeded");
    status_filter("failed", "failed");
    status_filter("missing", "missing");
    // Last seen: the newest return that came (a missing minion's document is
    // stamped when its job settled, not when the minion spoke).
    key(w, "answered");
    w.StartObject();
    key(w, "filter");
    w.StartObject();
    key(w, "bool");
    w.StartObject();
    key(w, "must_not");
    term(w, "status", "missing");
    w.EndObject();
    w.EndObject();
    key(w, "aggs");
    w.StartObject();
    key(w, "last");
    w.StartObject();
    key(w, "max");
    w.StartObject();
    key(w, "field");
    string(w, "@timestamp");
    w.EndObject();
    w.EndObject();
    w.EndObject();
    w.EndObject();
    w.EndObject();
    w.EndObject();
    w.EndObject();
  });
}

std::string returns_of_minion_body(std::string_view minion, std::optional<Micros> since, std::size_t limit) {
  return object_body([&](Writer& w) {
    page(w, limit, false);
    // The whole return stays in _source; a page of them needs only what a row shows.
    key(w, "_source");
    w.StartObject();
    key(w, "excludes");
    w.StartArray();
    for (const auto field : {"return", "return_text", "return_flat", "fun_args"}) string(w, field);
    w.EndArray();
    w.EndObject();
    sort_by(w, "job_started_at", "desc");
    filtered_query(w, [&] {
      term(w, "minion", minion);
      if (since) time_range(w, "job_started_at", since, std::nullopt);
    });
  });
}

std::string alerts_search_body(std::optional<Micros> since, std::string_view kind, std::size_t limit) {
  return object_body([&](Writer& w) {
    page(w, limit, false);
    sort_by(w, "@timestamp", "desc");
    filtered_query(w, [&] {
      if (!kind.empty()) term(w, "kinds", kind);
      if (since) time_range(w, "@timestamp", since, std::nullopt);
      // alerts.dedupe's claims share the index; they are no alerts.
      w.StartObject();
      key(w, "bool");
      w.StartObject();
      key(w, "must_not");
      term(w, "salttap.doc", "alert_claims");
      w.EndObject();
      w.EndObject();
    });
  });
}

}  // namespace salttap::history
