#pragma once
// The indexer's running half: the disk spool, the index setup (templates,
// retention policy) and the bulk shipper, wired so that
//   - documents are spooled from the first event, whether or not the engine
//     is up (an outage fills the spool, not memory);
//   - nothing is shipped before the templates are installed (an index
//     auto-created without them would map `return` dynamically and start
//     rejecting documents); setup is retried with backoff until it succeeds;
//   - when the spool is full, job/return/alert documents wait for room
//     (back-pressure: the tap's bounded queue then drops, counted) while raw
//     events and states are refused by the spool's policy (counted).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>

#include "common/metrics.h"
#include "indexer/bulk_shipper.h"
#include "indexer/index_setup.h"
#include "indexer/spool.h"
#include "service/indexer_config.h"

namespace salttap::service {

class IndexerService {
 public:
  // Opens (and recovers) the spool: throws indexer::SpoolError. Secrets must
  // be resolved (resolve_secrets).
  explicit IndexerService(IndexerConfig config);
  ~IndexerService();

  // Setup then shipping, on a background thread.
  void start();
  // Spools `docs`; while the spool has no room for job/return/alert
  // documents, waits until `give_up()` says stop (then they are counted lost).
  void spool(std::span<const indexer::BulkDoc> docs, const std::function<bool()>& give_up);
  // Whether returns should carry `return_flat`: known once setup succeeded.
  std::optional<bool> return_flat() const;
  bool setup_done() const { return setup_ok_.load(); }
  std::uint64_t pending() const;  // spooled, not yet acknowledged
  // Stops shipping after up to `drain` for in-flight batches; the spool keeps
  // the rest for the next start.
  void stop(std::chrono::milliseconds drain);
  void publish(Metrics& metrics) const;
  const indexer::Spool& spool_ref() const { return *spool_; }

 private:
  void setup_then_ship();

  IndexerConfig config_;
  std::unique_ptr<indexer::Spool> spool_;
  std::unique_ptr<indexer::BulkShipper> shipper_;
  std::thread setup_thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> setup_ok_{false};
  std::atomic<int> return_flat_{-1};  // -1 unknown, 0 no, 1 yes
  std::atomic<std::uint64_t> setup_attempts_{0}, setup_failures_{0};
  std::atomic<std::uint64_t> lost_at_stop_{0};  // job/return/alert docs not spooled when stopping while full
  std::atomic<std::uint64_t> backpressure_waits_{0};
};

}  // namespace salttap::service
