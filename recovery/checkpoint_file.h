#pragma once
// CheckpointFile: the correlator's snapshot on disk (docs/checkpoint.md),
// written atomically (common/atomic_file.h: a temporary file beside it,
// fdatasync, rename over the old one, fsync of the directory), so a crash at
// any point leaves either the old checkpoint or the new one, whole. A failed
// write is an error value, counted in stats(), and leaves the old file; the
// caller logs it (CheckpointKeeper). A temporary file a crash left behind is
// removed at the next load().
//
// Reading never stops salttap: an absent file is a first start; an unreadable,
// truncated, foreign, future-version, wrong-crc or malformed one is logged
// (WARN, with the path and why), counted by reason, and moved aside to
// `<path>.bad` so the next write does not hide it, and the run starts empty.

#include <cstdint>
#include <filesystem>
#include <optional>

#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/result.h"
#include "common/state_filesystem.h"
#include "correlator/correlator_snapshot.h"
#include "recovery/checkpoint_format.h"

namespace salttap::recovery {

struct CheckpointStats {
  std::uint64_t writes = 0;
  std::uint64_t write_failures = 0;
  std::uint64_t restored_jobs = 0;
  std::uint64_t restore_errors[kCheckpointErrors] = {};
  std::uint64_t last_write_bytes = 0;
  double last_write_seconds = 0;
  Micros last_write_at = 0;  // wall clock of the last good write
};

class CheckpointFile {
 public:
  explicit CheckpointFile(std::filesystem::path path, StateFilesystem& fs = posix_state_filesystem());

  // Writes `snapshot` atomically; the failed step (counted) when one failed.
  [[nodiscard]] Result<void, FileError> write(const correlator::CorrelatorSnapshot& snapshot, Micros now);
  // The saved snapshot; nothing when there is none or it is bad (see above).
  [[nodiscard]] std::optional<correlator::CorrelatorSnapshot> load();
  // Counts jobs a restore took in (the correlator says how many).
  void count_restored(std::size_t jobs) { stats_.restored_jobs += jobs; }

  const std::filesystem::path& path() const { return file_.path(); }
  const std::filesystem::path& temp_path() const { return file_.temp_path(); }
  std::filesystem::path aside_path() const;
  const CheckpointStats& stats() const { return stats_; }

 private:
  std::optional<correlator::CorrelatorSnapshot> reject(CheckpointError error, const std::string& why);

  AtomicFile file_;
  CheckpointStats stats_;
};

void publish_checkpoint_metrics(Metrics& metrics, const CheckpointStats& stats);

}  // namespace salttap::recovery
