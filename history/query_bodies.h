#pragma once
// The searches behind `salttap jobs` and `salttap minions`: request bodies in
// the engine's query DSL (bool filters of term / wildcard / range, no Lucene
// query strings, so no filter value can change the query's shape). Both
// Elasticsearch 7+ and OpenSearch 1+ read them. Reference: docs/commands.md.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "correlator/audit.h"
#include "indexer/index_layout.h"

namespace salttap::history {

// `salttap jobs` filters; an empty string is no filter. Globs (`*`, `?`) work
// on fun, minion, user and tgt; the rest match exactly.
struct JobQuery {
  std::string status;  // running, succeeded, failed, missing
  std::string fun;
  std::string minion;  // a minion the job expected or heard from
  std::string user;
  std::string tgt;
  std::optional<correlator::RiskLevel> min_risk;  // this level or above
  std::optional<Micros> since;                    // started at or after
  std::optional<Micros> until;                    // started before
  std::size_t limit = 50;
};

// The largest page an engine serves by default (index.max_result_window).
inline constexpr std::size_t kMaxResultWindow = 10000;
// Minion buckets per composite-aggregation page: a fleet of up to 2,000
// minions in one request (each page scans every return of the window), and
// 2,000 buckets of four sub-aggregations stay far below the engines' default
// search.max_buckets (65,535).
inline constexpr std::size_t kMinionPageSize = 2000;

// "/<prefix>-<kind>-*/_search" (no wildcard without index_date).
std::string search_path(const indexer::IndexLayout& layout, std::string_view kind);

// Jobs newest first (started_at desc), at most `limit` jids: collapsed on
// `jid`, each hit's inner hits (search_response.h kCollapsedHits) every
// matching document of that jid, one per master (at most 100).
std::string jobs_search_body(const JobQuery& query);
// The job documents of one jid (one per master), newest first.
std::string job_by_jid_body(std::string_view jid);
// The return documents of one job, by minion; of these masters (none: any master).
std::string returns_of_job_body(std::string_view jid, const std::vector<std::string>& masters);
// One page of per-minion counts over the returns of jobs started at or after
// `since` (rounded down to its minute, so that the engine can cache the
// request): a composite aggregation on minion, continued after `after_key`
// (the previous page's after_key object as JSON; empty: the first page);
// `minion` non-empty: that minion's returns only; at most `page_size` buckets.
std::string minions_page_body(std::optional<Micros> since, std::string_view after_key, std::string_view minion = {},
                              std::size_t page_size = kMinionPageSize);
// One minion's returns of jobs started at or after `since`, newest job first.
std::string returns_of_minion_body(std::string_view minion, std::optional<Micros> since, std::size_t limit);
// Alerts raised at or after `since`, newest first; `kind` non-empty: those
// with that kind among their kinds (failed, missing, risky).
std::string alerts_search_body(std::optional<Micros> since, std::string_view kind, std::size_t limit);

}  // namespace salttap::history
