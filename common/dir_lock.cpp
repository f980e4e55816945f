#include "common/dir_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "common/errno_text.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;

// The pid the holder wrote, "?" when the file holds none (yet).
std::string holder_of(StateFilesystem& files, int fd) {
  std::array<unsigned char, 32> buf{};
  std::size_t n = 0;
  if (files.read_at(fd, 0, buf, n) != 0 || n == 0) return "?";
  const std::string text(reinterpret_cast<const char*>(buf.data()), n);
  return text.substr(0, text.find('\n'));
}

// 0, or the errno of the write that failed.
int record_pid(StateFilesystem& files, int fd) {
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (const int e = files.truncate(fd, 0); e != 0) return e;
  std::span<const char> rest(pid);
  while (!rest.empty()) {
    std::size_t n = 0;
    if (const int e = files.write(fd, rest, n); e != 0) return e;
    if (n == 0) return EIO;
    rest = rest.subspan(std::min(n, rest.size()));
  }
  return 0;
}

}  // namespace

std::string DirLockError::text(std::string_view what) const {
  switch (kind) {
    case Kind::open:
      return fmt::format("cannot open {} lock {}: {}", what, lock_path.string(), errno_text(error));
    case Kind::held:
      return fmt::format("{} directory {} is in use by another salttap (pid {} holds {})", what,
                         lock_path.parent_path().string(), holder, lock_path.string());
    case Kind::lock:
      return fmt::format("cannot lock {}: {}", lock_path.string(), errno_text(error));
    case Kind::record:
      return fmt::format("cannot write {}: {}", lock_path.string(), errno_text(error));
  }
  return {};
}

Result<DirLock, DirLockError> DirLock::take(const fs::path& dir, StateFilesystem& fs) {
  fs::path path = dir / kFileName;
  int fd = -1;
  if (const int e = fs.open(path, O_RDWR | O_CREAT, fd); e != 0)
    return DirLockError{DirLockError::Kind::open, e, std::move(path), {}};
  DirLock lock(fs, fd, path);  // closes the file on every way out
  if (const int e = fs.lock_exclusive(fd); e != 0) {
    if (e == EWOULDBLOCK) return DirLockError{DirLockError::Kind::held, e, std::move(path), holder_of(fs, fd)};
    return DirLockError{DirLockError::Kind::lock, e, std::move(path), {}};
  }
  if (const int e = record_pid(fs, fd); e != 0) return DirLockError{DirLockError::Kind::record, e, std::move(path), {}};
  return lock;
}

DirLock::DirLock(DirLock&& other) noexcept
    : fs_(other.fs_), fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

DirLock& DirLock::operator=(DirLock&& other) noexcept {
  if (this != &other) {
    release();
    fs_ = other.fs_;
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

DirLock::~DirLock() { release(); }

// Closing the descriptor drops the flock; the file stays (removing it would
// race with a salttap that opened it and waits to lock it).
void DirLock::release() {
  if (fd_ >= 0) fs_->close(fd_);
  fd_ = -1;
}

}  // namespace salttap
