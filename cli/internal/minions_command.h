#pragma once
// `salttap minions`: per minion, the returns of the jobs of a window (jobs,
// succeeded, failed, missing, last seen), flaky minions first. Shared with
// `jobs`: history_output.h. Options, output and exit codes: docs/commands.md.

#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>

#include "cli/internal/command.h"
#include "cli/internal/history_output.h"
#include "common/clock.h"
#include "http/http_client.h"
#include "indexer/index_layout.h"

namespace salttap::cli {

int list_minions(http::HttpClient& http, const indexer::IndexLayout& layout, std::optional<Micros> since,
                 const HistoryOutput& output, std::FILE* out);

// Registers `minions` on `app`; --config goes to `config_path`.
Command add_minions_command(CLI::App& app, std::string& config_path);

}  // namespace salttap::cli
