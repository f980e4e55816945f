#pragma once
// Everything the indexer's running half needs (indexer_service.h): where the
// engine is and how to talk to it, which documents to build, the index
// templates, the bulk shipper, the disk spool, and the setup retry. Read
// from salttap's `indexer:` section or Salt's returner block by
// config/indexer_section.h.

#include <chrono>
#include <string>
#include <vector>

#include "common/backoff.h"
#include "http/http_client.h"
#include "indexer/bulk_shipper.h"
#include "indexer/document_builder.h"
#include "indexer/index_layout.h"
#include "indexer/spool.h"

namespace salttap::indexer {

// Where a secret comes from; read when the indexer starts (so `check-config`
// works on a machine without the secret).
struct SecretSource {
  std::string value, env, file;
  bool given() const { return !value.empty() || !env.empty() || !file.empty(); }
};

struct IndexerConfig {
  bool enabled = false;  // true once an indexer: or elasticsearch: block is given
  std::string source;    // "indexer", "elasticsearch (returner block)", ...
  http::HttpClientConfig http;
  DocumentOptions documents;
  TemplateSettings templates;
  bool install_templates = true;
  // Index setup is retried until the engine answers; the cap keeps shipping
  // resuming soon after the engine is back.
  BackoffPolicy setup_backoff{std::chrono::milliseconds(1000), std::chrono::milliseconds(15'000)};
  ShipperConfig shipper;
  SpoolConfig spool;
  // A second spool, <spool.dir>/backfill, for documents read from the job
  // cache (`run`'s reconcile): live documents go ahead of them
  // (indexer/spool_lanes.h). Its cap is a quarter of spool.max_bytes.
  bool backfill_lane = false;
  // How long one spool write waits for room before spool() asks its caller
  // whether to give up (and offers the documents again if not).
  std::chrono::milliseconds backpressure_wait{500};
  // Once shipping runs, GET /_cluster/health this often (the hosts in turn)
  // for salttap_indexer_cluster_*; 0: never.
  std::chrono::milliseconds cluster_health_interval{15'000};
  std::vector<std::string> notes;  // returner keys accepted but not needed, for one log line each
  SecretSource password, api_key;  // -> http.auth when the indexer starts
};

}  // namespace salttap::indexer
