#pragma once
// The disk spool between document building and shipping (format and recovery:
// docs/spool.md). Every document is appended here before it is shipped and
// leaves only when the engine acknowledged it, so an engine outage fills the
// disk, not memory, and `kill -9` loses nothing that reached the spool.
//
// Threads: one writer (the pipeline thread) calls append(); any number of
// shipper workers call take() / ack(); all methods are thread-safe.
//
// What "spooled" promises. append() counts a document in
// AppendResult::spooled only once its record is in a segment file, whole;
// from then on take() hands it out (after a restart too) until it is acked.
// How far it survives depends on SpoolConfig::fsync:
//   every_batch  spooled = written and fdatasynced (and, in a new segment, the
//                directory entry synced). It survives a power loss. A failed
//                write or fdatasync spools nothing of that write: the bytes
//                are cut off the segment, take() never sees them, and the
//                documents are dropped (io_error).
//   interval     spooled = written to the segment file. It survives salttap
//                crashing or being killed, and a power loss once the next
//                fdatasync (at most fsync_interval later, and at close) has
//                succeeded. A failed write spools nothing of it (cut, dropped:
//                io_error). A failed fdatasync drops nothing: those records
//                were reported spooled and may be shipped already; it is logged
//                at ERROR, counted in io_errors, and the next sync retries.
//   never        spooled = written to the segment file; nothing is synced. It
//                survives salttap crashing, not a power loss.
// Under every policy an I/O failure is an ERROR log line naming the path and
// the errno, counted in SpoolStats::io_errors; the spool stays usable (the next
// append tries again). A failed ledger write or segment removal loses nothing:
// a stale ledger means records resent (409) after a restart, an undeleted
// segment keeps its bytes on disk until a retry removes it.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/state_filesystem.h"
#include "common/steady_time.h"
#include "indexer/document.h"
#include "indexer/record_source.h"

namespace salttap::indexer {

class SpoolError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class FsyncPolicy : std::uint8_t { every_batch, interval, never };

struct SpoolConfig {
  std::filesystem::path dir;
  std::uint64_t max_bytes = 1ull << 30;  // cap on segment bytes on disk
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
  std::uint64_t torn_tails = 0;       // segments truncated to their last whole record
  std::uint64_t torn_bytes = 0;       // bytes cut off by those truncations
  std::uint64_t corrupt_records = 0;  // records skipped for a bad CRC / bad header / id not increasing
  std::uint64_t corrupt_bytes = 0;
  bool ledger_clamped = false;        // acked_id was beyond the last record
  bool ledger_rebuilt = false;        // ledger missing or bad CRC
  std::uint64_t pending_records = 0;  // unacknowledged records found, to be shipped
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
  std::uint64_t bytes = 0;  // on disk, all segments
  std::uint64_t segments = 0;
  std::uint64_t pending_records = 0;   // appended, not yet acknowledged
  std::uint64_t waiting_records = 0;   // of which not yet handed out to the shipper
  std::uint64_t appended_records = 0;  // since start
  std::uint64_t appended_bytes = 0;
  std::uint64_t acked_records = 0;
  std::uint64_t dropped[kDocClasses] = {};  // every reason, by class
  std::uint64_t dropped_by_reason[kDropReasons][kDocClasses] = {};
  std::uint64_t fsyncs = 0;  // fdatasync of segment data (the fsync policy)
  std::uint64_t ledger_writes = 0;
  std::uint64_t unknown_acks = 0;          // ids acked twice, or never handed out: ignored
  std::uint64_t read_corrupt_records = 0;  // found by take() after start (disk changed under us)
  std::uint64_t read_corrupt_bytes = 0;
  // Failed file operations, each logged at ERROR (a failed segment write or
  // sync under every_batch also drops its documents: io_error). A retry that
  // fails the same way again (the ledger, a segment's unlink) is not counted again.
  std::uint64_t io_errors = 0;
  std::uint64_t acked_id = 0;
  bool full = false;                // at least one class is being refused now
  std::uint64_t full_episodes = 0;  // times `full` went from false to true
};

class Spool final : public RecordSource {
 public:
  // Creates `dir` if needed and recovers what is there (RecoveryReport).
  // Throws SpoolError, naming the path and the reason, when the directory
  // cannot be used (permissions, not a directory, another salttap holds its
  // lock, a segment that cannot be read). `time` paces append()'s wait,
  // take()'s wait and the fsync interval; `files` makes every file operation.
  // Both must outlive the Spool.
  explicit Spool(SpoolConfig config, SteadyTime& time = real_steady_time(),
                 StateFilesystem& files = posix_state_filesystem());
  ~Spool() override;
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  const RecoveryReport& recovery() const;

  // Writer: appends in one write() per segment touched; fsyncs per the
  // policy. `wait` is how long a job / return / alert may wait for room.
  [[nodiscard]] AppendResult append(std::span<const BulkDoc> docs,
                                    std::chrono::milliseconds wait = std::chrono::milliseconds(0));

  // Shipper side (RecordSource).
  std::vector<SpoolRecord> take(std::size_t max_records, std::size_t max_bytes,
                                std::chrono::milliseconds wait) override;
  void ack(std::span<const std::uint64_t> ids) override;
  void wake_takers() override;

  // Called (under the spool's lock: it must not call back into this spool)
  // each time records become takeable and at close(), so one taker can wait
  // on several spools (indexer/spool_lanes.h). Set before any append.
  void set_data_listener(std::function<void()> listener);

  // Wakes every waiter; later take() returns what is left without waiting.
  void close();
  SpoolStats stats() const;
  std::filesystem::path dead_letter_dir() const override;  // <dir>/dead

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace salttap::indexer
