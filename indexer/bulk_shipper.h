#pragma once
// Bulk shipper: takes records from the spool (a RecordSource), posts them as NDJSON `_bulk`
// requests (batched by bytes, count and time; several in flight; gzip), and
// acks each record to the spool once the engine has it (2xx, 409) or it was
// dead-lettered. Per-item outcomes come from classify_bulk_response
// (bulk_result.h): 429/5xx/transport errors retry only the failed items with
// capped exponential backoff and full jitter; 4xx mapping rejections go to
// the dead-letter index with the server's reason and the original document
// as text, and to <spool>/dead/ as a local file if even that fails.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/metrics.h"
#include "indexer/http_client.h"
#include "indexer/record_source.h"

namespace salttap::indexer {

struct BatchConfig {
  std::size_t max_bytes = 5u << 20;   // uncompressed body
  std::size_t max_docs = 1000;
  std::chrono::milliseconds max_wait{1000};  // a partial batch goes after this
};

struct BackoffConfig {
  std::chrono::milliseconds initial{500};
  std::chrono::milliseconds max{60000};
};

struct ShipperConfig {
  BatchConfig batch;
  BackoffConfig backoff;
  std::size_t in_flight = 2;          // worker threads, each with its own HttpClient
  bool gzip = true;
  std::string dead_letter_prefix = "salt";  // -> <prefix>-deadletter-YYYY.MM.DD
  bool refresh_wait_for = false;      // tests only: ?refresh=wait_for
};

struct ShipperStats {
  std::uint64_t requests = 0, request_failures = 0;
  std::uint64_t docs_shipped = 0;       // acknowledged by the engine (incl. 409)
  std::uint64_t docs_conflict = 0;      // of which 409
  std::uint64_t docs_retried = 0;       // item retries
  std::uint64_t docs_dead_lettered = 0; // into the dead-letter index
  std::uint64_t docs_dead_letter_file = 0;  // into <spool>/dead/ (the index refused too)
  std::uint64_t bytes_sent = 0;         // request bodies as sent (compressed when gzip)
  double last_bulk_seconds = 0;
};

class BulkShipper {
 public:
  using ClientFactory = std::function<std::unique_ptr<HttpClient>()>;
  BulkShipper(ShipperConfig config, RecordSource& source, ClientFactory make_client);
  ~BulkShipper();  // stop(0)

  void start();
  // Stops taking new records; waits up to `drain` for in-flight batches to be
  // acknowledged. What is not acknowledged stays in the spool for next start.
  void stop(std::chrono::milliseconds drain = std::chrono::milliseconds(0));
  ShipperStats stats() const;
  // Writes salttap_indexer_* samples (README "Metrics").
  void publish(Metrics& metrics) const;
  // True when the last request to the engine got an answer.
  bool engine_reachable() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Capped exponential backoff with full jitter: uniform in [0, min(max, initial * 2^attempt)].
// `unit_random` in [0, 1); pure, so it is table-tested.
std::chrono::milliseconds backoff_delay(const BackoffConfig& config, unsigned attempt, double unit_random);

}  // namespace salttap::indexer
