#pragma once
// The disk spool between document building and shipping (format and recovery:
// docs/spool.md). Every document is appended here before it is shipped and
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
#include <string_view>
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
  std::uint64_t torn_bytes = 0;          // bytes cut off by those truncations
  std::uint64_t corrupt_records = 0;     // records skipped for a bad CRC / bad header / id not increasing
  std::uint64_t corrupt_bytes = 0;
  bool ledger_clamped = false;           // acked_id was beyond the last record
  bool ledger_rebuilt = false;           // ledger missing or bad CRC
  std::uint64_t pending_records = 0;     // unacknowledged records found, to be shipped
};

struct AppendResult {
  std::size_t spooled = 0;
  std::size_t dropped = 0;  // not spooled, for any DropReason (counted by class and reason in stats)
  bool timed_out = false;   // a job/return/alert doc waited `wait` for space: not spooled, counted
  // Positions in `docs` of the job/return/alert documents that timed out, so
  // the caller can offer exactly those again (back-pressure) or give up.
  std::vector<std::size_t> timed_out_docs;
};

// Why append() did not spool a document.
enum class DropReason : std::uint8_t {
  full = 0,       // events / states over their share of max_bytes
  timed_out = 1,  // a job / return / alert waited `wait` for space
  too_large = 2,  // the record alone is bigger than max_bytes (or 256 MiB)
  io_error = 3,   // the segment could not be written (logged at ERROR)
};
inline constexpr std::size_t kDropReasons = 4;
std::string_view to_string(DropReason r);

struct SpoolStats {
  std::uint64_t bytes = 0;             // on disk, all segments
  std::uint64_t segments = 0;
  std::uint64_t pending_records = 0;   // appended, not yet acknowledged
  std::uint64_t appended_records = 0;  // since start
  std::uint64_t appended_bytes = 0;
  std::uint64_t acked_records = 0;
  std::uint64_t dropped[kDocClasses] = {};  // every reason, by class
  std::uint64_t dropped_by_reason[kDropReasons][kDocClasses] = {};
  std::uint64_t fsyncs = 0;            // fdatasync of segment data (the fsync policy)
  std::uint64_t ledger_writes = 0;
  std::uint64_t unknown_acks = 0;      // ids acked twice, or never handed out: ignored
  std::uint64_t read_corrupt_records = 0;  // found by take() after start (disk changed under us)
  std::uint64_t read_corrupt_bytes = 0;
  std::uint64_t acked_id = 0;
  bool full = false;                   // at least one class is being refused now
  std::uint64_t full_episodes = 0;     // times `full` went from false to true
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
