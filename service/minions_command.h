#pragma once
// `salttap minions`: per minion, the returns of the jobs of a window (jobs,
// succeeded, failed, missing, last seen), flaky minions first. Shared with
// `jobs`: history_search.h. Options, output and exit codes: docs/commands.md.

#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "indexer/http_client.h"
#include "indexer/index_layout.h"
#include "service/history_query.h"
#include "service/history_search.h"
#include "service/search_response.h"

namespace salttap::service {

// Every minion with returns of jobs started at or after `since` (all
// composite pages), flaky first: most failed or missing returns, then the
// most jobs. `minion` non-empty: that minion only (an exact id). Pages of
// `page_size` minions; a page with fewer is the last.
Result<std::vector<MinionRow>, SearchError> fetch_minions(indexer::HttpClient& http, const indexer::IndexLayout& layout,
                                                          std::optional<Micros> since, std::string_view minion = {},
                                                          std::size_t page_size = kMinionPageSize);

int list_minions(indexer::HttpClient& http, const indexer::IndexLayout& layout, std::optional<Micros> since,
                 const HistoryOutput& output, std::FILE* out);

}  // namespace salttap::service
