#pragma once
// The disk spool between document building and shipping (format and recovery:
// indexer/SPOOL.md). Every document is appended here before it is shipped and
// leaves only when the engine acknowledged it, so an engine outage fills the
// disk, not memory, and `kill -9` loses nothing that reached the spool.
//
// Threads: one writer (the pipeline thread) calls append(); any number of
// shipper workers call take() / ack(); all methods are thread-safe.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "indexer/document.h"
#include "indexer/record_source.h"

namespace salttap::indexer {

class SpoolError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class FsyncPolicy : std::uint8_t { every_batch, interval, never };

struct SpoolConfig {
  std::filesystem::path dir;
  std::uint64_t max_bytes = 1ull << 30;     // cap on segment bytes on disk
  std::uint64_t segment_bytes = 64ull << 20;
  FsyncPolicy fsync = FsyncPolicy::interval;
  std::chrono::milliseconds fsync_interval{1000};
  // Full-spool policy: events are refused once the spool holds more than
  // events_limit x max_bytes, states above states_limit x max_bytes; jobs,
  // returns and alerts wait for space (back-pressure) up to append()'s `wait`.
  double events_limit = 0.8;
  double states_limit = 0.9;
};

struct RecoveryReport {
  std::uint64_t torn_tails = 0;          // segments truncated to their last whole record
  std::uint64_t corrupt_records = 0;     // records skipped for a bad CRC / bad header / id not increasing
  std::uint64_t corrupt_bytes = 0;
  bool ledger_clamped = false;           // acked_id was beyond the last record
  bool ledger_rebuilt = false;           // ledger missing or bad CRC
  std::uint64_t pending_records = 0;     // unacknowledged records found, to be shipped
};

struct AppendResult {
  std::size_t spooled = 0;
  std::size_t dropped = 0;  // refused by the full-spool policy (counted by class in stats)
  bool timed_out = false;   // a job/return/alert doc waited `wait` for space: not spooled, counted
};

struct SpoolStats {
  std::uint64_t bytes = 0;             // on disk, all segments
  std::uint64_t segments = 0;
  std::uint64_t pending_records = 0;   // appended, not yet acknowledged
  std::uint64_t appended_records = 0;  // since start
  std::uint64_t appended_bytes = 0;
  std::uint64_t acked_records = 0;
  std::uint64_t dropped[kDocClasses] = {};  // full-spool policy, by class
  std::uint64_t fsyncs = 0;
  std::uint64_t acked_id = 0;
  bool full = false;                   // at least one class is being refused now
};

class Spool final : public RecordSource {
 public:
  // Creates `dir` if needed and recovers what is there (RecoveryReport).
  // Throws SpoolError when the directory cannot be used (permissions, not a
  // directory, another salttap holds its lock).
  explicit Spool(SpoolConfig config);
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  const RecoveryReport& recovery() const;

  // Writer: appends in one write(); fsyncs per the policy.
  AppendResult append(std::span<const BulkDoc> docs, std::chrono::milliseconds wait = std::chrono::milliseconds(0));

  // Shipper side (RecordSource).
  std::vector<SpoolRecord> take(std::size_t max_records, std::size_t max_bytes,
                                std::chrono::milliseconds wait) override;
  void ack(std::span<const std::uint64_t> ids) override;

  // Wakes every waiter; later take() returns what is left without waiting.
  void close();
  SpoolStats stats() const;
  std::filesystem::path dead_letter_dir() const override;  // <dir>/dead

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace salttap::indexer
