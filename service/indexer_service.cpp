#include "service/indexer_service.h"

#include <random>

#include "common/log.h"

namespace salttap::service {

IndexerService::IndexerService(IndexerConfig config) : config_(std::move(config)) {
  spool_ = std::make_unique<indexer::Spool>(config_.spool);
  const auto& r = spool_->recovery();
  log::info("indexer: spool {} holds {} unacknowledged documents", config_.spool.dir.string(), r.pending_records);
  if (r.torn_tails || r.corrupt_records || r.ledger_clamped || r.ledger_rebuilt)
    log::warn("indexer: spool recovery: {} torn tails cut, {} corrupt records ({} bytes) skipped, ledger {}",
              r.torn_tails, r.corrupt_records, r.corrupt_bytes,
              r.ledger_rebuilt ? "rebuilt" : r.ledger_clamped ? "clamped to the data" : "ok");
  config_.shipper.dead_letter_prefix = config_.documents.layout.prefix;
  const indexer::HttpClientConfig http = config_.http;
  shipper_ = std::make_unique<indexer::BulkShipper>(config_.shipper, *spool_, [http] { return indexer::make_curl_client(http); });
}

IndexerService::~IndexerService() { stop(std::chrono::milliseconds(0)); }

void IndexerService::start() { setup_thread_ = std::thread([this] { setup_then_ship(); }); }

void IndexerService::setup_then_ship() {
  std::unique_ptr<indexer::HttpClient> http = indexer::make_curl_client(config_.http);
  std::mt19937_64 rng(std::random_device{}());
  std::chrono::milliseconds delay(1000);
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    ++setup_attempts_;
    if (!config_.install_templates) {
      log::info("indexer: install_templates is off: shipping without installing templates");
      return_flat_ = config_.documents.return_flat ? 1 : 0;
      break;
    }
    const indexer::IndexSetupReport report = indexer::install_index_setup(
        *http, config_.documents.layout, config_.templates, config_.documents.states);
    if (report.ok) {
      log::info("indexer: {}: {} templates installed{}{}", report.server.describe(), report.installed.size(),
                report.flat_type.empty() ? "" : ", return_flat as " + report.flat_type,
                report.degraded.empty() ? "" : fmt::format(" ({} degraded)", report.degraded.size()));
      return_flat_ = indexer::emit_return_flat(report) ? 1 : 0;
      break;
    }
    ++setup_failures_;
    log::error("indexer: setup failed ({}); documents stay in the spool; retrying in {} s", report.error,
               delay.count() / 1000);
    std::unique_lock lock(mutex_);
    // Jitter so several salttaps do not retry in step.
    const auto wait = delay / 2 + std::chrono::milliseconds(rng() % (delay.count() / 2 + 1));
    if (wake_.wait_for(lock, wait, [this] { return stopping_; })) return;
    delay = std::min(delay * 2, std::chrono::milliseconds(15000));  // shipping resumes soon after the engine is back
  }
  setup_ok_ = true;
  std::lock_guard lock(mutex_);
  if (!stopping_) shipper_->start();
}

void IndexerService::spool(std::span<const indexer::BulkDoc> docs, const std::function<bool()>& give_up) {
  if (docs.empty()) return;
  indexer::AppendResult r = spool_->append(docs, std::chrono::milliseconds(500));
  if (r.timed_out_docs.empty()) return;
  ++backpressure_waits_;
  log::warn("indexer: spool full ({} bytes): waiting for the engine to take documents", spool_->stats().bytes);
  // Offer exactly the documents that did not fit again, until they do.
  std::vector<indexer::BulkDoc> waiting;
  for (std::size_t i : r.timed_out_docs) waiting.push_back(docs[i]);
  while (!waiting.empty()) {
    if (give_up()) {
      lost_at_stop_ += waiting.size();
      log::error("indexer: stopping with a full spool: {} job/return/alert documents not spooled", waiting.size());
      return;
    }
    r = spool_->append(waiting, std::chrono::milliseconds(500));
    std::vector<indexer::BulkDoc> still;
    for (std::size_t i : r.timed_out_docs) still.push_back(std::move(waiting[i]));
    waiting = std::move(still);
  }
  log::info("indexer: spool has room again");
}

std::optional<bool> IndexerService::return_flat() const {
  const int v = return_flat_.load();
  if (v < 0) return std::nullopt;
  return v == 1;
}

std::uint64_t IndexerService::pending() const { return spool_->stats().pending_records; }

void IndexerService::stop(std::chrono::milliseconds drain) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !setup_thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (setup_thread_.joinable()) setup_thread_.join();
  if (shipper_) shipper_->stop(drain);
  if (spool_) spool_->close();
}

void IndexerService::publish(Metrics& m) const {
  shipper_->publish(m);
  const indexer::SpoolStats s = spool_->stats();
  m.gauge("salttap_spool_bytes", static_cast<double>(s.bytes), "Bytes of spool segments on disk");
  m.gauge("salttap_spool_segments", static_cast<double>(s.segments), "Spool segment files");
  m.gauge("salttap_spool_pending_documents", static_cast<double>(s.pending_records),
          "Documents spooled and not yet acknowledged by the engine");
  m.counter("salttap_spool_appended_documents_total", s.appended_records, "Documents written to the spool");
  m.counter("salttap_spool_appended_bytes_total", s.appended_bytes, "Bytes written to the spool");
  m.counter("salttap_spool_acked_documents_total", s.acked_records, "Documents acknowledged and released");
  m.counter("salttap_spool_fsyncs_total", s.fsyncs, "fsync calls on spool segments");
  m.gauge("salttap_spool_full", s.full ? 1 : 0, "1 while the full-spool policy refuses a class of documents");
  // A job/return/alert document that timed out waiting for room is offered
  // again (back-pressure), so "timed_out" is a wait, not a loss.
  for (std::size_t c = 0; c < indexer::kDocClasses; ++c) {
    const auto cls = indexer::to_string(static_cast<indexer::DocClass>(c));
    for (auto why : {indexer::DropReason::full, indexer::DropReason::too_large, indexer::DropReason::io_error})
      m.counter(fmt::format("salttap_spool_dropped_total{{class=\"{}\",reason=\"{}\"}}", cls, indexer::to_string(why)),
                s.dropped_by_reason[static_cast<std::size_t>(why)][c],
                "Documents the spool could not take, by class and reason (full: the full-spool policy)");
    m.counter(fmt::format("salttap_spool_backpressure_timeouts_total{{class=\"{}\"}}", cls),
              s.dropped_by_reason[static_cast<std::size_t>(indexer::DropReason::timed_out)][c],
              "Waits for spool room that timed out (the document is offered again)");
  }
  m.counter("salttap_spool_dropped_total{class=\"any\",reason=\"stopped_while_full\"}", lost_at_stop_.load());
  m.counter("salttap_indexer_backpressure_waits_total", backpressure_waits_.load(),
            "Times the pipeline waited for spool room (the tap queue drops meanwhile)");
  m.gauge("salttap_indexer_setup_done", setup_ok_ ? 1 : 0, "1 once templates are installed and shipping started");
  m.counter("salttap_indexer_setup_failures_total", setup_failures_.load(), "Failed index setup attempts");
}

}  // namespace salttap::service
