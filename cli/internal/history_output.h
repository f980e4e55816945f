#pragma once
// What `salttap jobs` and `salttap minions` share: their exit codes, how they
// print, one search against the engine, and the engine's problem as an
// exit code and one ERROR line. The engine is reached as `run` reaches it
// (salttap's indexer: section, or the returner block of either config), over
// the indexer's HttpClient: same TLS, auth and host failover.
// Options, output and exit codes: docs/commands.md.

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

#include "common/text_table.h"
#include "history/search_response.h"
#include "http/http_client.h"
#include "indexer/index_layout.h"

namespace salttap::cli {

// Exit codes of jobs, jobs show and minions (2 is a bad option, as for every command).
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

// The engine's problem as one ERROR line ("<command>: ...") and its exit code.
int report(std::string_view command, const history::SearchError& error);

Colour status_colour(std::string_view status);
Colour risk_colour(std::string_view risk);
// "2026-11-29T19:25:35.529749Z" -> "2026-11-29 19:25:35": seconds are enough on a terminal.
std::string short_time(std::string_view iso);
std::string or_dash(std::string_view s);
void print(std::FILE* out, std::string_view text);

}  // namespace salttap::cli
