#include "service/document_sinks.h"

#include "alerting/spool_full_alert.h"
#include "alerting/tap_journal_alert.h"
#include "indexer/latency_trace.h"

namespace salttap::service {

SpoolSink::SpoolSink(indexer::IndexerService& indexer, indexer::Lane lane)
    : indexer_(indexer), lane_(lane), full_episodes_(indexer.spool_ref().stats().full_episodes) {}

void SpoolSink::put(std::span<const indexer::BulkDoc> docs, const std::function<bool()>& give_up) {
  documents_ += docs.size();
  indexer::trace_documents(indexer::TraceStage::built, docs);
  indexer_.spool(docs, give_up, lane_);
  indexer::trace_documents(indexer::TraceStage::spooled, docs);
}

std::optional<correlator::Alert> SpoolSink::poll_alert(std::string_view master_id, Micros now) {
  if (journal_) {
    const tap::JournalStats j = journal_->stats();
    if (j.refusal_episodes > journal_episodes_) {
      journal_episodes_ = j.refusal_episodes;
      return alerting::make_tap_journal_alert(master_id, now, j, journal_->config());
    }
  }
  if (lane_ != indexer::Lane::live) return std::nullopt;
  const indexer::SpoolStats spool = indexer_.spool_ref().stats();
  if (spool.full_episodes <= full_episodes_) return std::nullopt;
  full_episodes_ = spool.full_episodes;
  // One alert per full-spool episode, through every outlet (log, webhook, bus, alerts index).
  return alerting::make_spool_full_alert(master_id, now, spool.bytes, indexer_.config().spool);
}

void NdjsonSink::put(std::span<const indexer::BulkDoc> docs, const std::function<bool()>&) {
  for (const auto& doc : docs) std::fwrite(doc.ndjson.data(), 1, doc.ndjson.size(), out_);
}

}  // namespace salttap::service
