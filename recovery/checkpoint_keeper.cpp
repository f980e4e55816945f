#include "recovery/checkpoint_keeper.h"

#include <system_error>

#include "common/log.h"

namespace salttap::recovery {

CheckpointKeeper::CheckpointKeeper(std::filesystem::path path, std::chrono::milliseconds interval,
                                   correlator::Correlator& correlator, const Clock& clock, SteadyTime& time)
    : file_(std::move(path)),
      interval_(interval),
      correlator_(correlator),
      clock_(clock),
      time_(time),
      last_write_(time.now()) {
  // The state directory may not exist yet when the spool's is elsewhere; a
  // failure here shows as a failed write, logged and counted.
  std::error_code ec;
  if (file_.path().has_parent_path()) std::filesystem::create_directories(file_.path().parent_path(), ec);
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
  // A failed write is counted and logged by the file; the next interval tries again.
  static_cast<void>(write_now());
}

void CheckpointKeeper::write_at_shutdown() {
  if (write_now())
    log::info("checkpoint: wrote {} tracked jobs to {} ({} bytes)", correlator_.tracked_jobs(), file_.path().string(),
              file_.stats().last_write_bytes);
}

bool CheckpointKeeper::write_now() {
  last_write_ = time_.now();
  if (!file_.write(correlator_.snapshot(), clock_.now())) return false;
  written_revision_ = correlator_.revision();
  return true;
}

}  // namespace salttap::recovery
