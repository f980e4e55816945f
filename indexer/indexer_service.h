#pragma once
// The indexer's running half: the disk spool, the index setup (templates,
// retention policy) and the bulk shipper, wired so that
//   - documents are spooled from the first event, whether or not the engine
//     is up (an outage fills the spool, not memory);
//   - nothing is shipped before the templates are installed (an index
//     auto-created without them would map `return` dynamically and start
//     rejecting documents); setup is retried with the common backoff
//     (IndexerConfig::setup_backoff) until it succeeds;
//   - with IndexerConfig::backfill_lane, documents from the job cache go to
//     a spool of their own and are shipped only when no live document waits
//     (indexer/spool_lanes.h);
//   - when the spool is full, job/return/alert documents wait for room
//     (back-pressure: the tap's bounded queue then drops, counted) while raw
//     events and states are refused by the spool's policy (counted).
// Seams for tests: the steady time every wait runs on (the setup retry, the
// spool's back-pressure wait, the shipper's windows and sleeps), the
// randomness of the backoffs' jitter, and the HttpClient factory (setup and
// shipper).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>

#include "common/backoff.h"
#include "common/metrics.h"
#include "common/steady_time.h"
#include "http/host_board.h"
#include "indexer/bulk_shipper.h"
#include "indexer/cluster_health.h"
#include "indexer/index_setup.h"
#include "indexer/indexer_config.h"
#include "indexer/spool.h"
#include "indexer/spool_lanes.h"

namespace salttap::indexer {

class IndexerService {
 public:
  using ClientFactory = BulkShipper::ClientFactory;

  // Opens (and recovers) the spool: throws SpoolError. Secrets must be
  // resolved. `make_client` (default: libcurl for config.http) makes the
  // setup's client and each shipper worker's.
  explicit IndexerService(IndexerConfig config, SteadyTime& time = real_steady_time(),
                          UnitRandom random = system_unit_random(), ClientFactory make_client = {});
  ~IndexerService();
  IndexerService(const IndexerService&) = delete;
  IndexerService& operator=(const IndexerService&) = delete;

  // Setup then shipping, on a background thread.
  void start();
  // Spools `docs`; while the spool has no room for job/return/alert
  // documents, offers exactly those again until they fit or `give_up()`
  // says stop (then they are counted lost and logged).
  // `lane`: Lane::backfill for documents read from the job cache; without a
  // backfill lane (IndexerConfig::backfill_lane) every document is live.
  void spool(std::span<const BulkDoc> docs, const std::function<bool()>& give_up, Lane lane = Lane::live);
  // Whether returns should carry `return_flat`: known once setup succeeded.
  std::optional<bool> return_flat() const;
  bool setup_done() const { return setup_ok_.load(); }
  // Whether the last bulk request got an answer (false before the first).
  bool engine_reachable() const { return shipper_->engine_reachable(); }
  std::uint64_t pending() const;  // spooled, not yet acknowledged, both lanes
  std::uint64_t pending(Lane lane) const;
  std::uint64_t waiting(Lane lane) const;  // of pending(lane), not yet handed to the shipper
  bool has_backfill_lane() const { return backfill_spool_ != nullptr; }
  // Stops shipping after up to `drain` for in-flight batches; the spool keeps
  // the rest for the next start. Interrupts the setup's wait or request.
  void stop(std::chrono::milliseconds drain);
  // The shipper's, the setup's and each lane's spool metrics (the backfill
  // lane's only with one).
  void publish(Metrics& metrics) const;
  // The shipper's counters: documents acknowledged, of which answered 409
  // (the engine has this or a newer version), dead-lettered.
  ShipperStats shipper_stats() const { return shipper_->stats(); }
  const Spool& spool_ref() const { return *spool_; }  // the live lane
  const Spool* backfill_spool() const { return backfill_spool_.get(); }
  const IndexerConfig& config() const { return config_; }
  // What the shipper's and setup's requests found of each configured host
  // (the default libcurl clients only; an injected factory's clients report nothing).
  std::vector<http::HostBoard::HostState> hosts() const { return board_->snapshot(); }
  // The last _cluster/health read (unknown before the first; cluster_health_interval).
  ClusterHealth cluster_health() const;
  // One line for /healthz: "engine hosts up 2/3; cluster yellow, 3 nodes".
  std::string engine_summary() const;

 private:
  void setup_then_ship();
  void poll_cluster_health(http::HttpClient& http, const ServerInfo& server);

  IndexerConfig config_;
  SteadyTime& time_;
  UnitRandom random_;
  ClientFactory make_client_;
  std::unique_ptr<Spool> spool_;           // the live lane (the only one without backfill_lane)
  std::unique_ptr<Spool> backfill_spool_;  // with backfill_lane
  std::unique_ptr<SpoolLanes> lanes_;      // with backfill_lane: what the shipper takes from
  std::unique_ptr<BulkShipper> shipper_;
  std::thread setup_thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  http::HttpClient* setup_http_ = nullptr;  // while a setup attempt runs (mutex_): stop() aborts it
  std::atomic<bool> setup_ok_{false};
  std::atomic<int> return_flat_{-1};  // -1 unknown, 0 no, 1 yes
  std::atomic<std::uint64_t> setup_attempts_{0};
  std::atomic<std::uint64_t> setup_failures_[kSetupFailures]{};  // by SetupFailure
  // Job/return/alert documents not spooled when stopping while full, by lane and class.
  std::atomic<std::uint64_t> lost_at_stop_[kLanes][kDocClasses]{};
  std::atomic<std::uint64_t> backpressure_waits_[kLanes]{};  // by lane
  std::shared_ptr<http::HostBoard> board_;                   // shared by every client of config_.http
  mutable std::mutex health_mutex_;
  ClusterHealth health_;  // health_mutex_
};

}  // namespace salttap::indexer
