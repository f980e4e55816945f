#include "indexer/indexer_service.h"

#include <array>

#include <fmt/format.h>

#include "common/log.h"
#include "common/thread_name.h"
#include "http/curl_http_client.h"
#include "indexer/internal/spool_metrics.h"

namespace salttap::indexer {

namespace {

void log_recovery(const Spool& spool, const std::filesystem::path& dir) {
  const auto& r = spool.recovery();
  log::info("indexer: spool {} holds {} unacknowledged documents", dir.string(), r.pending_records);
  if (r.torn_tails || r.corrupt_records || r.ledger_clamped || r.ledger_rebuilt)
    log::warn("indexer: spool {} recovery: {} torn tails cut, {} corrupt records ({} bytes) skipped, ledger {}",
              dir.string(), r.torn_tails, r.corrupt_records, r.corrupt_bytes,
              r.ledger_rebuilt   ? "rebuilt"
              : r.ledger_clamped ? "clamped to the data"
                                 : "ok");
}

}  // namespace

IndexerService::IndexerService(IndexerConfig config, SteadyTime& time, UnitRandom random, ClientFactory make_client)
    : config_(std::move(config)), time_(time), random_(std::move(random)), make_client_(std::move(make_client)) {
  // Every client of the indexer shares one view of the hosts (cooldowns,
  // per-host counts) and spreads its requests over them.
  board_ = std::make_shared<http::HostBoard>(http::host_displays(config_.http.hosts));
  config_.http.board = board_;
  config_.http.round_robin = true;
  if (!make_client_) make_client_ = [http = config_.http] { return http::make_curl_client(http); };
  spool_ = std::make_unique<Spool>(config_.spool, time_);
  log_recovery(*spool_, config_.spool.dir);
  if (config_.backfill_lane) {
    backfill_spool_ = std::make_unique<Spool>(backfill_lane_config(config_.spool), time_);
    log_recovery(*backfill_spool_, backfill_lane_config(config_.spool).dir);
    lanes_ = std::make_unique<SpoolLanes>(*spool_, *backfill_spool_, time_);
  }
  config_.shipper.dead_letter_prefix = config_.documents.layout.prefix;
  // One time and one randomness for the whole indexer: the setup retry, the
  // spool's back-pressure wait, and the shipper's batch windows, backoff
  // sleeps and jitter.
  config_.shipper.unit_random = random_;
  config_.shipper.steady_time = &time_;
  config_.shipper.gzip_level = config_.http.gzip_level;
  RecordSource& source = lanes_ ? static_cast<RecordSource&>(*lanes_) : *spool_;
  shipper_ = std::make_unique<BulkShipper>(config_.shipper, source, make_client_);
}

IndexerService::~IndexerService() { stop(std::chrono::milliseconds(0)); }

void IndexerService::start() {
  setup_thread_ = std::thread([this] {
    name_this_thread("index-setup");
    setup_then_ship();
  });
}

void IndexerService::setup_then_ship() {
  const std::unique_ptr<http::HttpClient> http = make_client_();
  Backoff backoff(config_.setup_backoff, random_);
  ServerInfo server;
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      setup_http_ = http.get();
    }
    ++setup_attempts_;
    if (!config_.install_templates) {
      log::info("indexer: install_templates is off: shipping without installing templates");
      return_flat_ = config_.documents.return_flat ? 1 : 0;
      break;
    }
    const IndexSetupReport report =
        install_index_setup(*http, config_.documents.layout, config_.templates, config_.documents.states);
    std::unique_lock lock(mutex_);
    setup_http_ = nullptr;
    if (stopping_) return;
    if (report.ok) {
      log::info("indexer: {}: {} templates installed{}{}", report.server.describe(), report.installed.size(),
                report.flat_type.empty() ? "" : ", return_flat as " + report.flat_type,
                report.degraded.empty() ? "" : fmt::format(" ({} degraded)", report.degraded.size()));
      return_flat_ = return_flat_enabled(report) ? 1 : 0;
      server = report.server;
      break;
    }
    ++setup_failures_[static_cast<std::size_t>(report.failure)];
    const std::chrono::milliseconds wait = backoff.next();
    log::error("indexer: setup failed ({}); documents stay in the spool; retrying in {:.1f} s", report.error,
               static_cast<double>(wait.count()) / 1000);
    if (time_.wait_for(lock, wake_, wait, [this] { return stopping_; })) return;
  }
  setup_ok_ = true;
  {
    std::lock_guard lock(mutex_);
    setup_http_ = nullptr;
    if (stopping_) return;
    shipper_->start();
  }
  poll_cluster_health(*http, server);
}

// On the setup thread once shipping runs, until stop().
void IndexerService::poll_cluster_health(http::HttpClient& http, const ServerInfo& server) {
  if (config_.cluster_health_interval.count() <= 0) return;
  const http::HttpRequest request = cluster_health_request(server);
  ClusterStatus logged = ClusterStatus::unknown;
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      setup_http_ = &http;
    }
    ClusterHealth h = parse_cluster_health(http.send(request));
    std::unique_lock lock(mutex_);
    setup_http_ = nullptr;
    if (stopping_) return;
    if (h.status != logged) {
      if (h.status == ClusterStatus::green || h.status == ClusterStatus::yellow)
        log::info("indexer: engine cluster {} ({} nodes); {} of {} hosts answer", to_string(h.status), h.nodes,
                  board_->up(), board_->size());
      else
        log::warn("indexer: engine cluster {}{}; {} of {} hosts answer; documents wait in the spool",
                  to_string(h.status), h.detail.empty() ? "" : " (" + h.detail + ")", board_->up(), board_->size());
      logged = h.status;
    }
    {
      std::lock_guard hl(health_mutex_);
      if (h.nodes < 0 && h.status == ClusterStatus::red) h.nodes = health_.nodes;  // a 503 names no count
      health_ = std::move(h);
    }
    if (time_.wait_for(lock, wake_, config_.cluster_health_interval, [this] { return stopping_; })) return;
  }
}

ClusterHealth IndexerService::cluster_health() const {
  std::lock_guard lock(health_mutex_);
  return health_;
}

std::string IndexerService::engine_summary() const {
  const ClusterHealth h = cluster_health();
  std::string out = fmt::format("engine hosts up {}/{}", board_->up(), board_->size());
  for (const auto& host : board_->snapshot())
    out += fmt::format("; {} {}", host.host, !host.seen ? "not tried" : host.up ? "up" : "down");
  out += fmt::format("; cluster {}", to_string(h.status));
  if (h.nodes >= 0) out += fmt::format(", {} nodes", h.nodes);
  return out;
}

void IndexerService::spool(std::span<const BulkDoc> docs, const std::function<bool()>& give_up, Lane lane) {
  if (docs.empty()) return;
  if (!backfill_spool_) lane = Lane::live;
  Spool& spool = lane == Lane::backfill ? *backfill_spool_ : *spool_;
  const auto l = static_cast<std::size_t>(lane);
  AppendResult r = spool.append(docs, config_.backpressure_wait);
  if (r.timed_out_docs.empty()) return;
  ++backpressure_waits_[l];
  log::warn("indexer: {} spool full ({} bytes): waiting for the engine to take documents", to_string(lane),
            spool.stats().bytes);
  // Offer exactly the documents that did not fit again, until they do.
  std::vector<BulkDoc> waiting;
  for (std::size_t i : r.timed_out_docs) waiting.push_back(docs[i]);
  while (!waiting.empty()) {
    if (give_up()) {
      for (const BulkDoc& doc : waiting) ++lost_at_stop_[l][static_cast<std::size_t>(doc.cls)];
      log::error("indexer: stopping with a full {} spool: {} job/return/alert documents not spooled", to_string(lane),
                 waiting.size());
      return;
    }
    r = spool.append(waiting, config_.backpressure_wait);
    std::vector<BulkDoc> still;
    for (std::size_t i : r.timed_out_docs) still.push_back(std::move(waiting[i]));
    waiting = std::move(still);
  }
  log::info("indexer: {} spool has room again", to_string(lane));
}

std::optional<bool> IndexerService::return_flat() const {
  const int v = return_flat_.load();
  if (v < 0) return std::nullopt;
  return v == 1;
}

std::uint64_t IndexerService::pending() const { return pending(Lane::live) + pending(Lane::backfill); }

std::uint64_t IndexerService::waiting(Lane lane) const {
  if (lane == Lane::live) return spool_->stats().waiting_records;
  return backfill_spool_ ? backfill_spool_->stats().waiting_records : 0;
}

std::uint64_t IndexerService::pending(Lane lane) const {
  if (lane == Lane::live) return spool_->stats().pending_records;
  return backfill_spool_ ? backfill_spool_->stats().pending_records : 0;
}

void IndexerService::stop(std::chrono::milliseconds drain) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !setup_thread_.joinable()) return;
    stopping_ = true;
    if (setup_http_) setup_http_->abort();
  }
  wake_.notify_all();
  if (setup_thread_.joinable()) setup_thread_.join();
  if (shipper_) shipper_->stop(drain);
  if (spool_) spool_->close();
  if (backfill_spool_) backfill_spool_->close();
}

void IndexerService::publish(Metrics& m) const {
  shipper_->publish(m);
  const auto publish_lane = [&](const Spool& spool, Lane lane) {
    const auto l = static_cast<std::size_t>(lane);
    std::array<std::uint64_t, kDocClasses> stopped_while_full{};
    for (std::size_t c = 0; c < kDocClasses; ++c) stopped_while_full[c] = lost_at_stop_[l][c].load();
    publish_spool_metrics(m, spool, stopped_while_full, backpressure_waits_[l].load(), lane);
  };
  publish_lane(*spool_, Lane::live);
  if (backfill_spool_) publish_lane(*backfill_spool_, Lane::backfill);
  m.gauge(MetricId::indexer_setup_done, setup_ok_ ? 1 : 0);
  const auto hosts = board_->snapshot();
  m.gauge(MetricId::indexer_hosts_configured, static_cast<double>(hosts.size()));
  m.gauge(MetricId::indexer_hosts_up, static_cast<double>(board_->up()));
  constexpr std::size_t kHostSlots = 8;
  for (std::size_t i = 0; i < hosts.size() && i < kHostSlots; ++i) {
    const std::string slot = std::to_string(i + 1);
    m.gauge(MetricId::indexer_host_up, {slot}, hosts[i].up ? 1 : 0);
    m.counter(MetricId::indexer_host_requests, {slot, "answered"}, hosts[i].answered);
    m.counter(MetricId::indexer_host_requests, {slot, "failed"}, hosts[i].failed);
  }
  const ClusterHealth h = cluster_health();
  for (std::size_t i = 0; i < kClusterStatuses; ++i) {
    const auto s = static_cast<ClusterStatus>(i);
    m.gauge(MetricId::indexer_cluster_status, {to_string(s)}, s == h.status ? 1 : 0);
  }
  m.gauge(MetricId::indexer_cluster_nodes, h.nodes);
  for (std::size_t i = 0; i < kSetupFailures; ++i)
    m.counter(MetricId::indexer_setup_failures, {to_string(static_cast<SetupFailure>(i))}, setup_failures_[i].load());
}

}  // namespace salttap::indexer
