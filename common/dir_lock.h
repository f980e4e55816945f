#pragma once
// DirLock: one process at a time in a state directory (the spool's, the tap
// journal's). It holds <dir>/lock with flock(LOCK_EX | LOCK_NB) and writes
// its pid into the file, so a second salttap is refused at once with an
// error that names the holder. flock, not a pid file: the kernel drops the
// lock when the process dies, so kill -9 never leaves a stale lock behind.
// The lock is released when the DirLock goes.

#include <filesystem>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/state_filesystem.h"

namespace salttap {

struct DirLockError {
  enum class Kind { open, held, lock, record };
  Kind kind = Kind::open;
  int error = 0;  // the errno (EWOULDBLOCK when held)
  std::filesystem::path lock_path;
  std::string holder;  // held: the pid the lock file names, "?" when it names none
  // For an operator; `what` names the directory's owner ("spool", "tap journal"):
  //   spool directory /var/spool/x is in use by another salttap (pid 42 holds /var/spool/x/lock)
  std::string text(std::string_view what) const;
};

class DirLock {
 public:
  static constexpr const char* kFileName = "lock";

  // Takes <dir>/lock, creating it; `dir` must exist.
  [[nodiscard]] static Result<DirLock, DirLockError> take(const std::filesystem::path& dir,
                                                          StateFilesystem& fs = posix_state_filesystem());

  DirLock(DirLock&& other) noexcept;
  DirLock& operator=(DirLock&& other) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

  const std::filesystem::path& path() const { return path_; }

 private:
  DirLock(StateFilesystem& fs, int fd, std::filesystem::path path) : fs_(&fs), fd_(fd), path_(std::move(path)) {}
  void release();

  StateFilesystem* fs_;
  int fd_;
  std::filesystem::path path_;
};

}  // namespace salttap
