#pragma once
// `salttap setup --dashboards URL`: imports salttap's saved objects into the
// Kibana (engine: Elasticsearch) or OpenSearch Dashboards (engine:
// OpenSearch) at URL, through the indexer's HttpClient (the same TLS and
// credentials as for the engine): `POST <URL>/api/saved_objects/_import?
// overwrite=true`, multipart/form-data with the NDJSON as its `file`, and the
// product's XSRF header. Every problem is one ERROR line and an exit code
// (docs/commands.md), each failing object named.

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_client.h"
#include "indexer/server_info.h"

namespace salttap::dashboards {

// Exit codes of `setup --dashboards` beyond setup's own (0 ready, 1 the
// engine or the config, 2 bad options).
inline constexpr int kDashboardsUnreachable = 3;  // no answer from URL (refused, timeout, TLS)
inline constexpr int kDashboardsAuth = 4;         // 401 or 403
inline constexpr int kDashboardsRefused = 5;      // another non-2xx, or an answer that is not the import API's
inline constexpr int kDashboardsObjects = 6;      // the import ran, but some objects failed (each named)
inline constexpr int kDashboardsFile = 7;         // the saved-objects file cannot be read or is not an export

struct DashboardsProduct {
  std::string_view name;         // "Kibana", "OpenSearch Dashboards"
  std::string_view export_dir;   // the export's folder: deploy/<dir>, <datadir>/salttap/dashboards/<dir>
  std::string_view xsrf_header;  // what the import API wants to see on a POST
};
// Kibana for Elasticsearch, OpenSearch Dashboards for OpenSearch.
DashboardsProduct dashboards_for(indexer::Flavor flavor);

// Where the export is looked for, in order: the installed data directory
// (next to the binary: <bin>/../share/salttap/dashboards, then the build's
// install prefix), then the source tree the binary was built from.
std::vector<std::filesystem::path> saved_objects_candidates(const DashboardsProduct& product);

struct SavedObjectsFile {
  std::filesystem::path path;
  std::string text;
  std::string error;  // set when no file could be read
};
SavedObjectsFile read_saved_objects(const std::filesystem::path& path);
// The first candidate that exists, read; an error lists every path tried.
SavedObjectsFile find_saved_objects(const std::vector<std::filesystem::path>& candidates);

struct DashboardsImport {
  std::string url;     // as given (base URL, with /s/<space> for a Kibana space)
  std::string ndjson;  // prepared (saved_objects.h): prefix applied
  std::size_t objects = 0;
  DashboardsProduct product;
};

// Sends the import and reports: a summary line on `out` when every object
// was imported (0), else ERROR lines and one of the exit codes above.
int import_dashboards(http::HttpClient& http, const DashboardsImport& import, std::FILE* out);

}  // namespace salttap::dashboards
