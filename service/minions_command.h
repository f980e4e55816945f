#pragma once
// `salttap minions`: per minion, the returns of the jobs of a window (jobs,
// succeeded, failed, missing, last seen), flaky minions first. Shared with
// `jobs`: history_search.h. Options, output and exit codes: docs/commands.md.

#include <cstdio>
#include <optional>

#include "common/clock.h"
#include "indexer/http_client.h"
#include "indexer/index_layout.h"
#include "service/history_search.h"

namespace salttap::service {

int list_minions(indexer::HttpClient& http, const indexer::IndexLayout& layout, std::optional<Micros> since,
                 const HistoryOutput& output, std::FILE* out);

}  // namespace salttap::service
