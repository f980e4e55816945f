#pragma once
// Reads the `indexer:` section of salttap's config into indexer::IndexerConfig
// (indexer/indexer_config.h), and Salt's own returner block
// (`elasticsearch:`, salt/returners/elasticsearch_return.py plus the
// elasticsearch execution module's connection keys), accepted as is so an
// operator moves over without rewriting it. docs/configuration.md lists
// every key.
//
//   indexer:
//     enabled: true
//     hosts: ["http://127.0.0.1:9200"]         base URLs or host:port (failover in order)
//     index_prefix: salt
//     index_date: true                          -YYYY.MM.DD suffix (the job's start, UTC)
//     number_of_shards: 1
//     number_of_replicas: 0
//     retention_days: 30                        ILM / ISM delete policy (absent: none)
//     install_templates: true                   at start (also: salttap setup)
//     states_index: false                       one document per state
//     events: {enabled: true, include: ["*"], exclude: [...]}
//     functions_blacklist: [saltutil.find_job, saltutil.running]
//     functions_whitelist: []
//     text_cap_bytes: 32768
//     tls: {verify: true, ca_file: ..., client_cert: ..., client_key: ...}
//     auth: {username: ..., password | password_env | password_file: ...,
//            api_key | api_key_env | api_key_file: ...}
//     bulk: {max_bytes: 5242880, max_docs: 1000, max_wait_ms: 1000, in_flight: 2,
//            gzip: true, backoff_initial_ms: 500, backoff_max_ms: 60000,
//            connect_timeout_ms: 5000, request_timeout_ms: 60000}
//     spool: {dir: /var/lib/salttap/spool, max_bytes: 1073741824, segment_bytes: 67108864,
//             fsync: interval, fsync_interval_ms: 1000}
//
//   elasticsearch:                              Salt's returner block, unchanged
//     hosts: ["10.0.0.1:9200"]   index_date: true   number_of_shards: 1
//     number_of_replicas: 0      functions_blacklist: [...]   states_count: true
//     states_order_output: true  states_single_index: true    (and the returner's
//     other keys: accepted, logged as not needed)

#include <string>

#include <yaml-cpp/yaml.h>

#include "http/http_client.h"
#include "indexer/indexer_config.h"

namespace salttap::config {

// Reads the password / API key into config.http.auth. Throws ConfigError
// naming the key, the env var or the file, never the secret.
void resolve_secrets(indexer::IndexerConfig& config);

indexer::IndexerConfig default_indexer_config();
// Applies Salt's returner block (`elasticsearch:`) to `config`. Throws
// ConfigError on a wrong type; unknown keys are kept as notes, since Salt's
// returner and execution module grew keys over the years.
void apply_returner_block(const YAML::Node& node, indexer::IndexerConfig& config);
// Applies salttap's own `indexer:` section (strict: unknown keys are errors).
void apply_indexer_section(const YAML::Node& node, indexer::IndexerConfig& config);
// A `tls:` block ({verify, ca_file, client_cert, client_key}) at `where`;
// also the webhook's.
http::TlsConfig parse_tls(const YAML::Node& node, const std::string& where);

}  // namespace salttap::config
