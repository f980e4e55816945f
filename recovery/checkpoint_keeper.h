#pragma once
// CheckpointKeeper: when `run` saves and restores the correlator's open jobs
// (docs/checkpoint.md). At start, before the first live event, the saved jobs
// go back into the correlator; then, at the end of a batch of events, a new
// checkpoint is written once `interval` passed and the correlator moved; and
// once more at shutdown, after the event loop stopped. A write that fails is
// counted (CheckpointStats::write_failures) and logged here, and the run goes
// on with the previous checkpoint on disk; the next interval tries again.
// Pipeline thread only.

#include <filesystem>

#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/state_filesystem.h"
#include "common/steady_time.h"
#include "config/config.h"
#include "correlator/correlator.h"
#include "recovery/checkpoint_file.h"

namespace salttap::recovery {

class CheckpointKeeper {
 public:
  CheckpointKeeper(std::filesystem::path path, std::chrono::milliseconds interval, correlator::Correlator& correlator,
                   const Clock& clock, SteadyTime& time = real_steady_time(),
                   StateFilesystem& fs = posix_state_filesystem());

  // Restores the saved jobs, if any are whole; returns how many.
  std::size_t restore();
  // After a batch: writes when the interval passed and something changed.
  void maybe_write();
  // At shutdown: writes whatever the correlator holds, and says so.
  void write_at_shutdown();

  const CheckpointFile& file() const { return file_; }

 private:
  [[nodiscard]] bool write_now();
  void report(const FileError& error);

  CheckpointFile file_;
  std::chrono::milliseconds interval_;
  correlator::Correlator& correlator_;
  const Clock& clock_;
  SteadyTime& time_;
  SteadyTime::time_point last_write_;
  std::uint64_t written_revision_ = 0;
  std::uint64_t failures_in_a_row_ = 0;
  std::uint64_t next_logged_failure_ = 1;
};

}  // namespace salttap::recovery
