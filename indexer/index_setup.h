#pragma once
// Installs the index contract on the engine before the first document goes
// out: detects the server (GET /), installs the retention policy when asked
// (ILM on Elasticsearch, ISM on OpenSearch) and one template per index kind
// (composable `_index_template`, legacy `_template` where composable ones do
// not exist). Idempotent: every request is a create-or-replace, so running it
// at each start (or twice) is fine.
//
// What the server lacks is degraded, not fatal, with one WARN line each:
// the flat type refused ("No handler for type [flattened]") -> templates
// without `return_flat`; ILM/ISM absent or refused -> templates without
// retention. Fatal (report.ok false, report.error says what to do): the
// engine unreachable, 401/403, not Elasticsearch/OpenSearch, a template refused.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_client.h"
#include "indexer/index_layout.h"
#include "indexer/index_templates.h"
#include "indexer/server_info.h"

namespace salttap::indexer {

// Why setup failed: the bounded `reason` label of salttap_indexer_setup_failures_total.
enum class SetupFailure : std::uint8_t {
  transport,      // no answer: refused, timeout
  tls,            // no answer because TLS failed (the server's certificate, ours, the handshake)
  http_auth,      // 401, 403: credentials or privileges
  http_error,     // any other HTTP error (a proxy's refusal, 5xx, a template refused)
  not_an_engine,  // GET / answered, but not as an Elasticsearch/OpenSearch salttap can use
  config,         // salttap's own settings (retention_days below 1)
};
inline constexpr std::size_t kSetupFailures = 6;
std::string_view to_string(SetupFailure f);

struct IndexSetupReport {
  bool ok = false;
  std::string error;                               // when !ok: what failed and what the operator can do
  SetupFailure failure = SetupFailure::transport;  // when !ok
  bool retryable = false;                          // the failure may pass by itself (no answer, 429, 5xx)
  ServerInfo server;
  TemplateApi template_api = TemplateApi::composable;
  std::string flat_type;                        // the installed whole-object type; empty: `return_flat` is not mapped
  LifecycleApi lifecycle = LifecycleApi::none;  // the installed retention policy
  std::vector<std::string> installed;           // "PUT /_index_template/salt-jobs", ...
  std::vector<std::string> degraded;            // one line per degrade (also logged)
};

[[nodiscard]] IndexSetupReport install_index_setup(http::HttpClient& http, const IndexLayout& layout,
                                                   const TemplateSettings& settings, bool states_index);

// Whether the document builder should fill `return_flat`: only when the
// returns template maps it (a document field the mapping lacks is kept in
// _source but costs bytes for nothing).
inline bool return_flat_enabled(const IndexSetupReport& report) { return report.ok && !report.flat_type.empty(); }

// The reason in an engine's error body ("mapper_parsing_exception: No handler
// for type [flattened] ..."), or the start of the body when it has none.
std::string engine_error_reason(std::string_view body);

}  // namespace salttap::indexer
