#pragma once
// The one event loop of salttap: events -> correlator -> documents -> sink,
// shared by `run` (live bus -> spool), `replay --ship` (captures -> spool)
// and `replay --output documents` (captures -> NDJSON on stdout). Per event:
// the correlator's deadlines advance, the event goes through the pipeline;
// documents go to the sink at the end of each batch of events, and in
// between whenever `batch_docs` are waiting. When the sink learns whether
// returns carry return_flat (after index setup) the builder is told, once;
// an alert the sink raises about itself (spool full) goes through every
// alert outlet. The replay's clock step (`_stamp`) is the capture feed's.

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string_view>

#include "common/clock.h"
#include "correlator/alert.h"
#include "indexer/document.h"
#include "pipeline/document_pipeline.h"
#include "pipeline/event_feed.h"

namespace salttap::pipeline {

class DocumentSink {
 public:
  virtual ~DocumentSink() = default;
  // Takes `docs`, in order. May wait for room while `give_up()` is false;
  // what it then cannot take is counted lost.
  virtual void put(std::span<const indexer::BulkDoc> docs, const std::function<bool()>& give_up) = 0;
  // Whether returns carry return_flat, once the sink knows; nullopt: not
  // (yet) known, the config's choice stands.
  virtual std::optional<bool> return_flat() const { return std::nullopt; }
  // An alert about the sink itself (its spool started refusing documents:
  // once per episode), or nothing.
  virtual std::optional<correlator::Alert> poll_alert(std::string_view /*master_id*/, Micros /*now*/) {
    return std::nullopt;
  }
};

struct EventLoopOptions {
  std::size_t batch_docs = 512;  // one sink write per this many documents at most, within a batch
  bool settle_at_end = false;    // replay: when the feed ends every open job settles (emitted final)
  // Asked while the sink waits for room: true stops waiting.
  std::function<bool()> give_up = [] { return false; };
  // The same, for the documents left when the feed has ended.
  std::function<bool()> give_up_at_end = [] { return false; };
  std::function<void()> after_batch;  // after each batch's documents went to the sink (metrics)
};

// Runs `feed` to its end; returns the feed's exit code.
int run_event_loop(EventFeed& feed, DocumentPipeline& pipeline, DocumentSink& sink, const EventLoopOptions& options);

}  // namespace salttap::pipeline
