#pragma once
// `salttap jobs` (the indexed jobs, filtered, newest first) and `salttap jobs
// show JID` (one job with every minion's return). Shared with `minions`:
// history_search.h. Options, output and exit codes: docs/commands.md.

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

#include "common/clock.h"
#include "indexer/http_client.h"
#include "indexer/index_layout.h"
#include "service/history_query.h"
#include "service/history_search.h"

namespace salttap::service {

// What the command line gives, before the times and levels are read.
struct JobsArgs {
  std::string status, fun, minion, user, tgt, risk, since, until;
  std::size_t limit = 50;
};

// Reads --since/--until (durations before `now`, UTC times) and --risk into
// `query`; false and `error` when one cannot be read or since is not before until.
[[nodiscard]] bool make_job_query(const JobsArgs& args, Micros now, JobQuery& query, std::string& error);

// One job as `jobs show` (and the job browser) see it: the newest job
// document of that jid, how many masters ran one, and its returns.
struct JobDetail {
  JobRow job;
  std::size_t masters = 1;
  Hits<ReturnRow> returns;
};
// nullopt: no job with this jid. A job whose returns index does not exist
// yet has no returns, nothing worse.
Result<std::optional<JobDetail>, SearchError> fetch_job(indexer::HttpClient& http, const indexer::IndexLayout& layout,
                                                        const std::string& jid);

int list_jobs(indexer::HttpClient& http, const indexer::IndexLayout& layout, const JobQuery& query,
              const HistoryOutput& output, std::FILE* out);
int show_job(indexer::HttpClient& http, const indexer::IndexLayout& layout, const std::string& jid,
             const HistoryOutput& output, std::FILE* out);

}  // namespace salttap::service
