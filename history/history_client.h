#pragma once
// Reading the indexed history back from the engine: one client for every
// question `salttap jobs`, `salttap minions` and the job browser ask. Each
// call is one search (or one page loop) over the indexer's HttpClient (same
// TLS, auth and host failover as `run`), its answer checked by
// search_response.h. Printing is the caller's business.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "history/job_merge.h"
#include "history/query_bodies.h"
#include "history/search_response.h"
#include "http/http_client.h"
#include "indexer/index_layout.h"

namespace salttap::history {

// POST <search_path(layout, kind)> with `body`.
http::HttpResponse search(http::HttpClient& http, const indexer::IndexLayout& layout, std::string_view kind,
                          std::string body);

// A jobs filter as a person gives it (the command line's flags, the
// browser's query string), before the times and levels are read.
struct JobsArgs {
  std::string status, fun, minion, user, tgt, risk, since, until;
  std::size_t limit = 50;
};

// Reads since/until (durations before `now`, UTC times) and risk into
// `query`; false and `error` when one cannot be read or since is not before until.
[[nodiscard]] bool make_job_query(const JobsArgs& args, Micros now, JobQuery& query, std::string& error);

// One job as `jobs show` and the job browser see it: the job documents of
// that jid merged across the masters of its fleet (job_merge.h), and per
// minion the best return any of them indexed (a minion no master heard from
// yet: a `pending` row with no document).
struct JobDetail {
  MergedJob merged;
  Hits<ReturnRow> returns;
};
// Every job with this jid, newest first: one normally; more when fleets or
// the collision guard keep them apart ("same jid, different jobs"). Empty:
// no job with this jid. A job whose returns index does not exist yet has no
// returns, nothing worse.
Result<std::vector<JobDetail>, SearchError> fetch_job(http::HttpClient& http, const indexer::IndexLayout& layout,
                                                      const std::string& jid);

// Every minion with returns of jobs started at or after `since` (all
// composite pages), flaky first: most failed or missing returns, then the
// most jobs. `minion` non-empty: that minion only (an exact id). Pages of
// `page_size` minions; a page with fewer is the last.
Result<std::vector<MinionRow>, SearchError> fetch_minions(http::HttpClient& http, const indexer::IndexLayout& layout,
                                                          std::optional<Micros> since, std::string_view minion = {},
                                                          std::size_t page_size = kMinionPageSize);

}  // namespace salttap::history
