#pragma once
// The event loop's document sinks: the indexer's spool (`run`, `replay
// --ship`), which also raises the spool-full alert once per episode (and
// the tap journal's, for `run`), and
// NDJSON on a stream (`replay --output documents`: the bulk lines the
// indexer would spool, the golden files' source).

#include <cstdint>
#include <cstdio>

#include "indexer/indexer_service.h"
#include "pipeline/event_loop.h"
#include "tap/tap_journal.h"

namespace salttap::pipeline {

class SpoolSink final : public DocumentSink {
 public:
  // Episodes before this sink existed (a spool full at start) raise no alert.
  // `lane`: Lane::backfill for documents read from the job cache (`run`'s
  // reconcile), which the shipper sends only when no live document waits.
  // The spool-full alerts are the live lane's sink's (the one the event loop
  // polls), for each lane the indexer has, naming the lane.
  explicit SpoolSink(indexer::IndexerService& indexer, indexer::Lane lane = indexer::Lane::live);
  void put(std::span<const indexer::BulkDoc> docs, const std::function<bool()>& give_up) override;
  std::optional<bool> return_flat() const override { return indexer_.return_flat(); }
  std::optional<correlator::Alert> poll_alert(std::string_view master_id, Micros now) override;
  std::uint64_t documents() const { return documents_; }  // handed to the spool so far
  // Also raises the tap journal's alert, once per refusal episode.
  void watch_journal(const tap::TapJournal* journal) {
    journal_ = journal;
    journal_episodes_ = journal ? journal->stats().refusal_episodes : 0;
  }

 private:
  indexer::IndexerService& indexer_;
  indexer::Lane lane_;
  const tap::TapJournal* journal_ = nullptr;
  std::uint64_t journal_episodes_ = 0;
  std::uint64_t full_episodes_[indexer::kLanes] = {};  // by lane: those already alerted
  std::uint64_t documents_ = 0;
};

class NdjsonSink final : public DocumentSink {
 public:
  explicit NdjsonSink(std::FILE* out) : out_(out) {}
  void put(std::span<const indexer::BulkDoc> docs, const std::function<bool()>& give_up) override;

 private:
  std::FILE* out_;
};

}  // namespace salttap::pipeline
