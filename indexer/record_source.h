#pragma once
// What the shipper reads from: the spool in production, an in-memory queue in
// unit tests.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "indexer/document.h"

namespace salttap::indexer {

struct SpoolRecord {
  std::uint64_t id = 0;
  DocClass cls = DocClass::event;
  std::string payload;  // BulkDoc::ndjson
};

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // The next records not yet handed out (oldest first), at most max_records
  // and about max_bytes of payload (at least one record), waiting up to
  // `wait` when none is available. `wait` runs on the SteadyTime the shipper
  // was given (common/steady_time.h): a source and its shipper share one, so
  // tests drive both with one fake clock. Records handed out and never acked
  // are handed out again only after a restart (the shipper retries in memory).
  virtual std::vector<SpoolRecord> take(std::size_t max_records, std::size_t max_bytes,
                                        std::chrono::milliseconds wait) = 0;
  // Acknowledged by the engine (delivered, 409, or dead-lettered). Any order.
  virtual void ack(std::span<const std::uint64_t> ids) = 0;
  // Every take() waiting now returns at once (with what is there, maybe
  // nothing); when none is waiting, the next take() returns after one look.
  // Takes after that wait as usual. The shipper's stop() calls it so that no
  // taker sits out its wait, even one that checked the stop flag just before.
  virtual void wake_takers() = 0;
  // Where documents go that even the dead-letter index refused.
  virtual std::filesystem::path dead_letter_dir() const = 0;
};

}  // namespace salttap::indexer
