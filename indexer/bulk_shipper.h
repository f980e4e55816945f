#pragma once
// Bulk shipper: takes records from the spool (a RecordSource), posts them as NDJSON `_bulk`
// requests (batched by bytes, count and time; several in flight; gzip), and
// acks each record to the spool once the engine has it (2xx, 409) or it was
// dead-lettered. Per-item outcomes come from classify_bulk_response
// (internal/bulk_result.h): 429/5xx/transport errors retry only the failed items with
// capped exponential backoff and full jitter; 4xx mapping rejections go to
// the dead-letter index with the server's reason and the original document
// as text, and to <spool>/dead/ as a local file if even that fails.
// A request the engine refuses as a whole (413 too large, 400 malformed) is
// split in halves until the offending document stands alone.
// Threads: one preparer takes the next batch from the source and builds and
// gzips its body while `in_flight` workers each send one request and wait
// for the engine; a worker picks up the prepared batch as soon as it is free.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/backoff.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/steady_time.h"
#include "http/http_client.h"
#include "indexer/record_source.h"

namespace salttap::indexer {

struct BatchConfig {
  std::size_t max_bytes = 5u << 20;  // uncompressed body
  std::size_t max_docs = 1000;
  // A partial batch goes after this. Short: a settled job should be searchable
  // within the engine's refresh, not wait for company. Under load batches fill
  // long before it, so it costs no throughput.
  std::chrono::milliseconds max_wait{50};
  // A partial batch goes at once when a worker is free to send it: max_wait
  // only applies while every worker is busy (and the batch could not go
  // anyway). A lone settled job is sent the moment it is spooled.
  bool ship_when_idle = true;
};

struct ShipperConfig {
  BatchConfig batch;
  BackoffPolicy backoff;      // between retries of failed items (common/backoff.h)
  std::size_t in_flight = 2;  // worker threads, each with its own HttpClient
  bool gzip = true;
  // The shipper compresses each body itself, the next while one is in flight
  // (IndexerService sets it from HttpClientConfig::gzip_level).
  int gzip_level = 1;
  std::string dead_letter_prefix = "salt";  // -> <prefix>-deadletter-YYYY.MM.DD
  bool refresh_wait_for = false;            // tests only: ?refresh=wait_for
  const Clock* clock = nullptr;             // dates dead letters; nullptr: the system clock (tests inject one)
  // Batch windows, take() slices, backoff sleeps and the stop() drain run on
  // this clock; the RecordSource waits on the same one. nullptr: real time.
  SteadyTime* steady_time = nullptr;
  UnitRandom unit_random;  // backoff jitter; empty: system_unit_random()
};

// Why a bulk request failed as a whole: the bounded `reason` label of
// salttap_indexer_bulk_request_failures_total.
enum class RequestFailure : std::uint8_t {
  transport,  // no response: refused, timeout, aborted (TLS: `tls`)
  http_429,
  http_5xx,
  http_413,      // too large: the batch is split
  http_auth,     // 401, 403: the operator must act; retried meanwhile
  http_4xx,      // other 4xx (400: one bad document, isolated by splitting)
  http_other,    // 1xx, 3xx
  bad_response,  // 2xx whose body is not a complete bulk response (truncated): retried
  tls,           // no response because TLS failed (the server's certificate, ours, the handshake)
};
inline constexpr std::size_t kRequestFailures = 9;
std::string_view to_string(RequestFailure f);

struct ShipperStats {
  std::uint64_t requests = 0, request_failures = 0;
  std::uint64_t docs_shipped = 0;           // acknowledged by the engine (incl. 409)
  std::uint64_t docs_conflict = 0;          // of which 409
  std::uint64_t docs_retried = 0;           // item retries
  std::uint64_t docs_dead_lettered = 0;     // into the dead-letter index
  std::uint64_t docs_dead_letter_file = 0;  // into <spool>/dead/ (the index refused too)
  std::uint64_t bytes_sent = 0;             // request bodies as sent (compressed when gzip)
  double last_bulk_seconds = 0;
  std::array<std::uint64_t, kRequestFailures> failures{};  // request_failures by RequestFailure
  std::uint64_t dead_letter_file_errors = 0;               // the local file could not be written: kept and retried
  double bulk_seconds_sum = 0;                             // over `requests` (mean latency = sum / requests)
  std::uint64_t in_flight_batches = 0;                     // batches workers hold now (at most in_flight)
};

class BulkShipper {
 public:
  using ClientFactory = std::function<std::unique_ptr<http::HttpClient>()>;
  BulkShipper(ShipperConfig config, RecordSource& source, ClientFactory make_client);
  ~BulkShipper();  // stop(0)

  void start();
  // Stops taking new records; waits up to `drain` for in-flight batches to be
  // acknowledged. What is not acknowledged stays in the spool for next start.
  void stop(std::chrono::milliseconds drain = std::chrono::milliseconds(0));
  ShipperStats stats() const;
  // Writes the shipping samples, salttap_indexer_* (docs/operations.md "Metrics").
  void publish(Metrics& metrics) const;
  // True when the last request to the engine got an answer.
  bool engine_reachable() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace salttap::indexer
