#include "pipeline/document_sinks.h"

#include "alerting/spool_full_alert.h"
#include "alerting/tap_journal_alert.h"
#include "indexer/latency_trace.h"

namespace salttap::pipeline {

namespace {

const indexer::Spool* lane_spool(const indexer::IndexerService& indexer, indexer::Lane lane) {
  return lane == indexer::Lane::live ? &indexer.spool_ref() : indexer.backfill_spool();
}

}  // namespace

SpoolSink::SpoolSink(indexer::IndexerService& indexer, indexer::Lane lane) : indexer_(indexer), lane_(lane) {
  for (const auto l : {indexer::Lane::live, indexer::Lane::backfill})
    if (const indexer::Spool* spool = lane_spool(indexer_, l))
      full_episodes_[static_cast<std::size_t>(l)] = spool->stats().full_episodes;
}

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
  // One alert per full-spool episode of each lane, through every outlet (log,
  // webhook, bus, alerts index); two lanes filling at once alert on two polls.
  for (const auto l : {indexer::Lane::live, indexer::Lane::backfill}) {
    const indexer::Spool* spool = lane_spool(indexer_, l);
    if (!spool) continue;
    const indexer::SpoolStats stats = spool->stats();
    std::uint64_t& alerted = full_episodes_[static_cast<std::size_t>(l)];
    if (stats.full_episodes <= alerted) continue;
    alerted = stats.full_episodes;
    const indexer::SpoolConfig& live = indexer_.config().spool;
    return alerting::make_spool_full_alert(master_id, now, stats.bytes,
                                           l == indexer::Lane::live ? live : indexer::backfill_lane_config(live), l);
  }
  return std::nullopt;
}

void NdjsonSink::put(std::span<const indexer::BulkDoc> docs, const std::function<bool()>&) {
  for (const auto& doc : docs) std::fwrite(doc.ndjson.data(), 1, doc.ndjson.size(), out_);
}

}  // namespace salttap::pipeline
