#pragma once
// The job browser's URL space, read from a request target without touching
// the engine: which route a path is, its path argument (a jid, a minion id)
// and its query parameters, percent-decoded. Reference: docs/ui.md.
//
//   /ui/                      the jobs list        (page)
//   /ui/job/<jid>             one job              (page)
//   /ui/minion/<id>           one minion           (page)
//   /ui/minions, /ui/alerts   (page)
//   /ui/static/<file>         the embedded CSS and JS (asset)
//   /ui/api/jobs              ?status&fun&minion&user&tgt&risk&since&until&limit
//   /ui/api/jobs/<jid>
//   /ui/api/minions           ?since
//   /ui/api/minions/<id>      ?since&limit
//   /ui/api/alerts            ?kind&since&limit

#include <map>
#include <string>
#include <string_view>

namespace salttap::web {

enum class UiRoute { page, asset, api_jobs, api_job, api_minions, api_minion, api_alerts, redirect, other };
// The metric label of a route ("page", "api_jobs", ...; a redirect is "other").
std::string_view to_string(UiRoute route);

struct UiTarget {
  UiRoute route = UiRoute::other;
  std::string path;                          // decoded, without the query
  std::string argument;                      // the jid, minion id or asset name; decoded
  std::map<std::string, std::string> query;  // decoded; a repeated name keeps its last value
  std::string location;                      // redirect: where to
};

// "%41+b" -> "A b" (in a query, '+' is a space); a bad escape stays as it is.
std::string percent_decode(std::string_view text, bool plus_is_space);
// `root_redirect`: "/" (and "") redirect to "/ui/" (`salttap ui`, where the browser is the point).
UiTarget route_ui(std::string_view target, bool root_redirect);

}  // namespace salttap::web
