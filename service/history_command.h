#pragma once
// `salttap jobs`, `salttap jobs show JID` and `salttap minions`: what the
// engine holds, from the terminal. The engine is reached as `run` reaches it
// (salttap's indexer: section, or the returner block of either config), over
// the indexer's HttpClient: same TLS, auth and host failover.
// Options, output and exit codes: docs/commands.md.

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

#include "common/clock.h"
#include "indexer/http_client.h"
#include "indexer/index_layout.h"
#include "service/history_query.h"

namespace salttap::service {

// Exit codes of the three commands (2 is a bad option, as for every command).
inline constexpr int kHistoryOk = 0;
inline constexpr int kHistoryError = 1;       // a bad config, no indexer configured
inline constexpr int kHistoryUsage = 2;       // bad options: a filter or time it cannot read
inline constexpr int kHistoryEngine = 3;      // the engine is unreachable, refused, or answered nonsense
inline constexpr int kHistoryNoIndices = 4;   // the engine holds no salttap indices yet
inline constexpr int kHistoryJobUnknown = 5;  // jobs show: no job with this jid

struct HistoryOutput {
  std::string format = "table";  // table or json
  std::size_t width = 100;       // table width (the terminal's)
  bool colour = false;
};

// What the command line gives, before the times and levels are read.
struct JobsArgs {
  std::string status, fun, minion, user, tgt, risk, since, until;
  std::size_t limit = 50;
};

// Reads --since/--until (durations before `now`, UTC times) and --risk into
// `query`; false and `error` when one cannot be read or since is not before until.
bool make_job_query(const JobsArgs& args, Micros now, JobQuery& query, std::string& error);

int list_jobs(indexer::HttpClient& http, const indexer::IndexLayout& layout, const JobQuery& query,
              const HistoryOutput& output, std::FILE* out);
int show_job(indexer::HttpClient& http, const indexer::IndexLayout& layout, const std::string& jid,
             const HistoryOutput& output, std::FILE* out);
int list_minions(indexer::HttpClient& http, const indexer::IndexLayout& layout, std::optional<Micros> since,
                 const HistoryOutput& output, std::FILE* out);

}  // namespace salttap::service
