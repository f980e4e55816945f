#pragma once
// What answers at the engine URL: `GET /` -> flavor and version, and what
// salttap may use there (templates, whole-object field type, lifecycle API).
// Pure: the caller sends the request; tests feed recorded answers.
//
// Compatibility headers: salttap sends typeless requests with plain
// `application/json` (and `application/x-ndjson` for `_bulk`), which every
// Elasticsearch from 7 and OpenSearch from 1 accepts as its own current API.
// `Accept/Content-Type: application/vnd.elasticsearch+json;compatible-with=N`
// only asks ES 8/9 to emulate the previous major's REST API, which salttap
// does not need, and OpenSearch does not know that media type; so none are sent
// (see compatibility_headers_needed).

#include <string>
#include <string_view>

#include "http/http_client.h"

namespace salttap::indexer {

enum class Flavor { unknown, elasticsearch, opensearch };
std::string_view to_string(Flavor flavor);

struct ServerVersion {
  int major = 0, minor = 0, patch = 0;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads the defaulted <=>
  friend auto operator<=>(const ServerVersion&, const ServerVersion&) = default;
};

struct ServerInfo {
  Flavor flavor = Flavor::unknown;
  ServerVersion version;        // for a hidden OpenSearch version: major only (from Lucene), 0 if unknown
  std::string number;           // version.number as reported ("7.10.2" for a hidden OpenSearch)
  bool version_hidden = false;  // OpenSearch with compatibility.override_main_response_version
  std::string build_flavor;     // Elasticsearch: default, oss, serverless (empty when absent)
  std::string product_header;   // X-Elastic-Product (Elasticsearch >= 7.14)
  std::string problem;          // why flavor is unknown / the server is unsupported; empty when usable

  bool usable() const { return flavor != Flavor::unknown && problem.empty(); }
  // "Elasticsearch 8.15.3", "OpenSearch 2.x (version hidden: reports 7.10.2)"
  std::string describe() const;
};

struct ServerDetection {
  ServerInfo info;
  // Set when GET / itself failed (no answer, 401/403, other non-2xx): the
  // message tells the operator what to do. Empty when the server answered.
  std::string error;
};

// Detects flavor and version from the answer to `GET /`.
ServerDetection detect_server(const http::HttpResponse& response);

// Derived capabilities.
// Composable `_index_template` (Elasticsearch >= 7.8, every OpenSearch);
// otherwise legacy `_template`.
bool composable_templates(const ServerInfo& info);
// "flattened" (Elasticsearch >= 7.13 core, 7.3-7.12 with the default
// distribution's x-pack), "flat_object" (OpenSearch >= 2.7; also tried when
// the version is hidden), or "" (none: `return_flat` is left out). A type
// the server turns down at template time is dropped then (index_setup).
std::string_view flat_type(const ServerInfo& info);
enum class LifecycleApi { none, ilm, ism };
std::string_view to_string(LifecycleApi api);
LifecycleApi lifecycle_api(const ServerInfo& info);
// Never: see the header comment. Kept as a function so the decision has one
// place and a test.
constexpr bool compatibility_headers_needed(const ServerInfo&) { return false; }

}  // namespace salttap::indexer
