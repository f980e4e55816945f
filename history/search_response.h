#pragma once
// Reading the engine's answers to the searches of query_bodies.h, with
// every field checked: an answer that is not what a search returns is an
// error with a one-line message, never a crash or a silently empty list.
// A document missing a field shows "-" (or 0) for it; its `_source` is kept
// verbatim for JSON output. Fuzzed: tests/fuzz/search_response_fuzz.cpp.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "http/http_client.h"

namespace salttap::history {

enum class SearchProblem {
  unreachable,  // no answer: connection refused, timeout, TLS
  no_indices,   // no index matches (404 index_not_found, or a pattern that matched none)
  refused,      // an HTTP error: the engine's error type and reason
  bad_answer,   // 2xx, but not a search result
};

// The name of the inner hits a collapsed jobs search asks for.
inline constexpr const char* kCollapsedHits = "documents";

struct SearchError {
  SearchProblem problem = SearchProblem::bad_answer;
  std::string message;  // one line, bounded
};

struct FailedState {
  std::string minion, id, function, comment;
};

struct JobRow {
  std::string source;  // the `_source` as JSON
  std::string jid, status, fun, tgt, user, started_at, risk, kind, master, args_text;
  std::string fleet;  // `fleet`; a document from before fleets: its master
  std::int64_t expected = 0, returned = 0, succeeded = 0, failed = 0, missing = 0, late = 0, pending = 0;
  std::vector<FailedState> failed_states;
  // minions.expected|succeeded|failed|missing|late (each capped at the
  // indexer's list_cap; `truncated` when one was cut) and the syndics that
  // stood in for their minions on a master of masters.
  std::vector<std::string> expected_list, succeeded_list, failed_list, missing_list, late_list, syndics;
  bool truncated = false;
};

struct ReturnRow {
  std::string source;  // the `_source` as JSON
  std::string minion, status, reason, return_text, master;
  bool late = false;
  std::optional<std::int64_t> retcode;
  std::vector<std::string> seen_by;  // set by the merge (history_client.h): the masters that had this return
  std::vector<std::string> failed_state_ids;
};

struct MinionRow {
  std::string minion;
  std::uint64_t jobs = 0, succeeded = 0, failed = 0, missing = 0;
  std::string last_seen;  // ISO UTC, empty: no answer in the window
};

template <typename Row>
struct Hits {
  std::vector<Row> rows;
  std::uint64_t total = 0;  // when the search tracked it, else rows.size()
};

struct MinionPage {
  std::vector<MinionRow> rows;
  std::string after_key;  // JSON object; empty: the last page
};

// A collapsed search (jobs_search_body) gives each jid's documents as the
// hit's inner hits: they come in place of the hit, one row each, in order.
Result<Hits<JobRow>, SearchError> parse_job_hits(const http::HttpResponse& response);
Result<Hits<ReturnRow>, SearchError> parse_return_hits(const http::HttpResponse& response);
Result<MinionPage, SearchError> parse_minion_page(const http::HttpResponse& response);

}  // namespace salttap::history
