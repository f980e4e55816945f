#include "recovery/checkpoint_file.h"

#include <cerrno>
#include <chrono>
#include <string>

#include <fmt/format.h>

#include "common/errno_text.h"
#include "common/log.h"

namespace salttap::recovery {

// 0600: the open jobs name minions, targets and arguments.
CheckpointFile::CheckpointFile(std::filesystem::path path, StateFilesystem& fs)
    : file_(std::move(path), fs, {.sync = true, .mode = 0600}) {}

std::filesystem::path CheckpointFile::aside_path() const { return path().string() + ".bad"; }

Result<void, FileError> CheckpointFile::write(const correlator::CorrelatorSnapshot& snapshot, Micros now) {
  const auto start = std::chrono::steady_clock::now();
  const std::string bytes = encode_checkpoint(snapshot, now);
  auto written = file_.replace(bytes);
  if (!written) {
    ++stats_.write_failures;
    return written;
  }
  ++stats_.writes;
  stats_.last_write_bytes = bytes.size();
  stats_.last_write_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats_.last_write_at = now;
  return written;
}

std::optional<correlator::CorrelatorSnapshot> CheckpointFile::reject(CheckpointError error, const std::string& why) {
  ++stats_.restore_errors[static_cast<std::size_t>(error)];
  std::error_code ec;
  std::filesystem::rename(path(), aside_path(), ec);
  log::warn("checkpoint: ignoring {} ({}: {}); {}; starting without the open jobs", path().string(), to_string(error),
            why, ec ? "could not move it aside: " + ec.message() : "moved aside to " + aside_path().string());
  return std::nullopt;
}

std::optional<correlator::CorrelatorSnapshot> CheckpointFile::load() {
  if (file_.remove_leftover_temp())
    log::warn("checkpoint: removed {}, left by a write that did not finish; reading the checkpoint before it",
              temp_path().string());
  auto read = file_.read();
  if (!read) {
    if (read.error().error == ENOENT) {
      log::info("checkpoint: none at {}; starting without open jobs", path().string());
      return std::nullopt;
    }
    return reject(CheckpointError::unreadable, errno_text(read.error().error));
  }
  const std::string& bytes = read.value();
  auto decoded = decode_checkpoint(bytes);
  if (!decoded) return reject(decoded.error().kind, decoded.error().why);
  DecodedCheckpoint& d = decoded.value();
  log::info("checkpoint: read {} ({} jobs, written at {})", path().string(), d.snapshot.jobs.size(),
            format_utc(d.written_at));
  return std::move(d.snapshot);
}

void publish_checkpoint_metrics(Metrics& m, const CheckpointStats& s) {
  using enum MetricId;
  m.counter(correlator_checkpoint_writes, s.writes);
  m.counter(correlator_checkpoint_write_failures, s.write_failures);
  m.counter(correlator_checkpoint_restored_jobs, s.restored_jobs);
  for (std::size_t i = 0; i < kCheckpointErrors; ++i)
    m.counter(correlator_checkpoint_restore_errors, {to_string(static_cast<CheckpointError>(i))}, s.restore_errors[i]);
  m.gauge(correlator_checkpoint_bytes, static_cast<double>(s.last_write_bytes));
  m.gauge(correlator_checkpoint_last_write_duration_seconds, s.last_write_seconds);
  m.gauge(correlator_checkpoint_last_write_timestamp_seconds,
          static_cast<double>(s.last_write_at) / static_cast<double>(kMicrosPerSecond));
}

}  // namespace salttap::recovery
