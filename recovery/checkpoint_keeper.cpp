#include "recovery/checkpoint_keeper.h"

#include "common/log.h"

namespace salttap::recovery {

CheckpointKeeper::CheckpointKeeper(std::filesystem::path path, std::chrono::milliseconds interval,
                                   correlator::Correlator& correlator, const Clock& clock, SteadyTime& time,
                                   StateFilesystem& fs)
    : file_(std::move(path), fs),
      interval_(interval),
      correlator_(correlator),
      clock_(clock),
      time_(time),
      last_write_(time.now()) {
  // The state directory may not exist yet when the spool's is elsewhere; a
  // failure here shows as a failed write, logged and counted.
  if (file_.path().has_parent_path()) static_cast<void>(fs.create_directories(file_.path().parent_path()));
}

std::size_t CheckpointKeeper::restore() {
  auto snapshot = file_.load();
  if (!snapshot) return 0;
  const std::size_t jobs = correlator_.restore(*snapshot);
  file_.count_restored(jobs);
  // Deadlines that passed while salttap was down fire now, by the live rules.
  correlator_.advance();
  log::info("checkpoint: restored {} open jobs from {}; {} still tracked after their deadlines", jobs,
            file_.path().string(), correlator_.tracked_jobs());
  written_revision_ = correlator_.revision();
  return jobs;
}

void CheckpointKeeper::maybe_write() {
  const auto now = time_.now();
  if (now - last_write_ < interval_ || correlator_.revision() == written_revision_) return;
  // A failed write is counted and logged; the next interval tries again.
  static_cast<void>(write_now());
}

void CheckpointKeeper::write_at_shutdown() {
  if (write_now())
    log::info("checkpoint: wrote {} tracked jobs to {} ({} bytes)", correlator_.tracked_jobs(), file_.path().string(),
              file_.stats().last_write_bytes);
}

bool CheckpointKeeper::write_now() {
  last_write_ = time_.now();
  if (auto written = file_.write(correlator_.snapshot(), clock_.now()); !written) {
    report(written.error());
    return false;
  }
  if (failures_in_a_row_ > 0) log::info("checkpoint: written again after {} failures", failures_in_a_row_);
  failures_in_a_row_ = 0;
  next_logged_failure_ = 1;
  written_revision_ = correlator_.revision();
  return true;
}

// A lasting fault (a read-only disk) would log every interval: the 1st,
// 10th, 100th... failure in a row is logged, the rest counted.
void CheckpointKeeper::report(const FileError& error) {
  if (++failures_in_a_row_ != next_logged_failure_) return;
  next_logged_failure_ *= 10;
  log::warn("checkpoint: cannot write {}: {}; the previous checkpoint stays ({} failures in a row)",
            file_.path().string(), error.text(), failures_in_a_row_);
}

}  // namespace salttap::recovery
