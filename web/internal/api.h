#pragma once
// The job browser's JSON API (/ui/api/...): the searches of `salttap jobs`,
// `jobs show` and `minions` (query_bodies.h) asked of the engine by
// salttap, so the browser never sees the engine or its credentials. Each
// call is one function of the engine client, the index layout, the request's
// query parameters and the time; it answers a status and a JSON body:
//   200  the answer ({"jobs": [...]}, {"job": {...}, "returns": [...]}, ...);
//        with "note" when the engine holds no salttap indices yet
//   400  {"error": "..."}: a filter it cannot read
//   404  {"error": "..."}: no job with this jid
//   502  {"error": "..."}: the engine is unreachable, refused, or answered nonsense
// Fields: docs/ui.md.

#include <map>
#include <string>

#include "common/clock.h"
#include "common/metrics_server.h"
#include "http/http_client.h"
#include "indexer/index_layout.h"

namespace salttap::web {

using UiQuery = std::map<std::string, std::string>;

// ?status&fun&minion&user&tgt&risk&since&until&limit (as `salttap jobs`; limit 1-1000, default 100).
WebResponse ui_api_jobs(http::HttpClient& http, const indexer::IndexLayout& layout, const UiQuery& query, Micros now);
// One job: its summary, failed states, and every minion's return.
WebResponse ui_api_job(http::HttpClient& http, const indexer::IndexLayout& layout, const std::string& jid);
// ?since (default 7d): per minion, jobs, failed, missing, failure rate, last seen; flaky first.
WebResponse ui_api_minions(http::HttpClient& http, const indexer::IndexLayout& layout, const UiQuery& query,
                           Micros now);
// One minion: its counts over ?since (default 7d) and its latest ?limit (default 100) returns.
WebResponse ui_api_minion(http::HttpClient& http, const indexer::IndexLayout& layout, const std::string& minion,
                          const UiQuery& query, Micros now);
// ?kind (failed, missing, risky) &since (default 7d) &limit (default 100): alerts, newest first.
WebResponse ui_api_alerts(http::HttpClient& http, const indexer::IndexLayout& layout, const UiQuery& query, Micros now);

}  // namespace salttap::web
