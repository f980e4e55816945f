#include "recovery/checkpoint_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "common/log.h"

namespace salttap::recovery {
namespace {

std::string errno_text(int e) { return std::strerror(e); }

// Returns "" or what failed.
std::string write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return "write: " + errno_text(errno);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

std::string sync_dir(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return "open directory: " + errno_text(errno);
  std::string error;
  if (::fsync(fd) != 0) error = "fsync directory: " + errno_text(errno);
  ::close(fd);
  return error;
}

// Returns "" or what failed; the temporary file is removed on failure.
std::string write_atomically(const std::filesystem::path& path, const std::filesystem::path& tmp,
                             std::string_view bytes) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return "open " + tmp.string() + ": " + errno_text(errno);
  std::string error = write_all(fd, bytes);
  if (error.empty() && ::fsync(fd) != 0) error = "fsync: " + errno_text(errno);
  if (::close(fd) != 0 && error.empty()) error = "close: " + errno_text(errno);
  if (error.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) error = "rename: " + errno_text(errno);
  if (!error.empty()) {
    ::unlink(tmp.c_str());
    return error;
  }
  return sync_dir(path.parent_path());
}

}  // namespace

CheckpointFile::CheckpointFile(std::filesystem::path path) : path_(std::move(path)) {}

std::filesystem::path CheckpointFile::temp_path() const { return path_.string() + ".tmp"; }
std::filesystem::path CheckpointFile::aside_path() const { return path_.string() + ".bad"; }

bool CheckpointFile::write(const correlator::CorrelatorSnapshot& snapshot, Micros now) {
  const auto start = std::chrono::steady_clock::now();
  const std::string bytes = encode_checkpoint(snapshot, now);
  const std::string error = write_atomically(path_, temp_path(), bytes);
  if (!error.empty()) {
    ++stats_.write_failures;
    // A lasting fault (a read-only disk) would log every interval: the 1st,
    // 10th, 100th... failure in a row is logged, the rest counted.
    if (++failures_in_a_row_ == next_logged_failure_) {
      next_logged_failure_ *= 10;
      log::warn("checkpoint: cannot write {}: {}; the previous checkpoint stays ({} failures in a row)", path_.string(),
                error, failures_in_a_row_);
    }
    return false;
  }
  if (failures_in_a_row_ > 0) log::info("checkpoint: written again after {} failures", failures_in_a_row_);
  failures_in_a_row_ = 0;
  next_logged_failure_ = 1;
  ++stats_.writes;
  stats_.last_write_bytes = bytes.size();
  stats_.last_write_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats_.last_write_at = now;
  return true;
}

std::optional<correlator::CorrelatorSnapshot> CheckpointFile::reject(CheckpointError error, const std::string& why) {
  ++stats_.restore_errors[static_cast<std::size_t>(error)];
  std::error_code ec;
  std::filesystem::rename(path_, aside_path(), ec);
  log::warn("checkpoint: ignoring {} ({}: {}); {}; starting without the open jobs", path_.string(), to_string(error),
            why, ec ? "could not move it aside: " + ec.message() : "moved aside to " + aside_path().string());
  return std::nullopt;
}

std::optional<correlator::CorrelatorSnapshot> CheckpointFile::load() {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      log::info("checkpoint: none at {}; starting without open jobs", path_.string());
      return std::nullopt;
    }
    return reject(CheckpointError::unreadable, errno_text(errno));
  }
  std::string bytes;
  char buf[65536];
  std::string error;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno_text(errno);
    if (n <= 0) break;
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (!error.empty()) return reject(CheckpointError::unreadable, error);
  auto decoded = decode_checkpoint(bytes);
  if (!decoded) return reject(decoded.error().kind, decoded.error().why);
  DecodedCheckpoint& d = decoded.value();
  log::info("checkpoint: read {} ({} jobs, written at {})", path_.string(), d.snapshot.jobs.size(),
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
