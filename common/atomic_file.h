#pragma once
// AtomicFile: one small state file (the spool's ledger, the correlator's
// checkpoint, the reconcile record) that is replaced whole or not at all.
//
// replace() writes <path>.tmp, syncs it (fdatasync), renames it over <path>
// and syncs the directory, so a crash or a failed step at any point leaves
// either the previous file or the new one, whole, at <path>: never a torn
// one. A failure is a FileError value naming the step, the path and the
// errno, never an exception; the temporary file of a failed write is removed.
// A crash between write and rename leaves <path>.tmp behind: read() never
// looks at it, and remove_leftover_temp() clears it at the next start.
//
// Every file operation goes through a StateFilesystem, so tests make any
// step fail (tests/support/faulty_state_filesystem.h).

#include <cstddef>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/state_filesystem.h"

namespace salttap {

// A failed file operation: which step, on which path, and the errno.
struct FileError {
  int error = 0;          // the errno; 0: no failure
  std::string_view step;  // "open", "write", "fdatasync", "rename", ... (a string literal)
  std::filesystem::path path;
  explicit operator bool() const { return error != 0; }
  std::string text() const;  // "<step> <path>: <what the errno means>"
};

struct AtomicFileOptions {
  // true: once replace() returns, the new content survives a power cut.
  // false (no syncs): a power cut may bring back the previous file, whole.
  bool sync = true;
  unsigned mode = 0644;  // of the file, as created (less the umask)
};

class AtomicFile {
 public:
  static constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();

  explicit AtomicFile(std::filesystem::path path, StateFilesystem& fs = posix_state_filesystem(),
                      AtomicFileOptions options = {});

  // <path> holds `bytes` afterwards, or (on an error) what it held before;
  // except when only the directory sync failed (step "fsync (directory)"):
  // then <path> holds `bytes`, but a power cut may bring back the old file.
  [[nodiscard]] Result<void, FileError> replace(std::string_view bytes);
  // The whole file. Errors: ENOENT (step "open") when there is none, EFBIG
  // (step "read") when it holds more than `max_bytes`.
  [[nodiscard]] Result<std::string, FileError> read(std::size_t max_bytes = kNoLimit) const;
  // Removes <path>.tmp, left by a crash in the middle of replace(); true
  // when there was one.
  bool remove_leftover_temp();

  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& temp_path() const { return temp_; }

 private:
  Result<void, FileError> write_temp(std::string_view bytes);

  std::filesystem::path path_;
  std::filesystem::path temp_;
  StateFilesystem& fs_;
  AtomicFileOptions options_;
};

}  // namespace salttap
