#pragma once
// `salttap jobs` (the indexed jobs, filtered, newest first) and `salttap jobs
// show JID` (one job with every minion's return). Shared with `minions`:
// history_output.h. Options, output and exit codes: docs/commands.md.

#include <cstddef>
#include <cstdio>
#include <string>

#include "cli/internal/command.h"
#include "cli/internal/history_output.h"
#include "common/clock.h"
#include "history/history_client.h"
#include "http/http_client.h"
#include "indexer/index_layout.h"

namespace salttap::cli {

int list_jobs(http::HttpClient& http, const indexer::IndexLayout& layout, const history::JobQuery& query,
              const HistoryOutput& output, std::FILE* out);
int show_job(http::HttpClient& http, const indexer::IndexLayout& layout, const std::string& jid,
             const HistoryOutput& output, std::FILE* out);

// Registers `jobs` (and `jobs show`) on `app`; --config goes to `config_path`.
Command add_jobs_command(CLI::App& app, std::string& config_path);

}  // namespace salttap::cli
