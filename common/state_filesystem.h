#pragma once
// StateFilesystem: the file operations of everything salttap keeps on disk
// (the spool, its ledger and lock, the checkpoint, the reconcile record, the
// tap journal's lock), behind one seam, so tests can make any of them fail
// (ENOSPC on the third segment write, a short write, EIO from fdatasync, a
// rename or unlink refused) and check what the owner of the state does about
// it (tests/support/faulty_state_filesystem.h).
//
// Every call is one system call (or a few, for directories), returns 0 or the
// errno of the failure, and retries EINTR itself. The spool makes one call
// per segment write / sync / read window, never one per record, so the
// virtual call costs nothing measurable.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace salttap {

enum class FileKind : std::uint8_t { missing, regular, directory, other };

struct DirectoryEntry {
  std::string name;  // the file name alone
  FileKind kind = FileKind::other;
};

class StateFilesystem {
 public:
  using Path = std::filesystem::path;
  virtual ~StateFilesystem() = default;

  // --- paths ---
  // FileKind::missing (and 0) when nothing is there.
  virtual int kind_of(const Path& p, FileKind& kind) = 0;
  // mkdir -p.
  virtual int create_directories(const Path& dir) = 0;
  // access(W_OK | X_OK): files can be created in `dir`.
  virtual int check_writable(const Path& dir) = 0;
  virtual int list_directory(const Path& dir, std::vector<DirectoryEntry>& entries) = 0;
  virtual int rename(const Path& from, const Path& to) = 0;
  virtual int remove(const Path& p) = 0;  // unlink

  // --- descriptors ---
  // open(2) with O_CLOEXEC added; a file it creates gets `mode` (less the umask).
  virtual int open(const Path& p, int flags, int& fd, unsigned mode) = 0;
  int open(const Path& p, int flags, int& fd) { return open(p, flags, fd, 0644); }
  virtual int close(int fd) = 0;
  // flock(LOCK_EX | LOCK_NB): EWOULDBLOCK while another process holds it.
  virtual int lock_exclusive(int fd) = 0;
  virtual int file_size(int fd, std::uint64_t& size) = 0;
  // One pread(2): `n` < out.size() at the end of the file (or a short read).
  virtual int read_at(int fd, std::uint64_t offset, std::span<unsigned char> out, std::size_t& n) = 0;
  // One write(2) at the file offset: `written` may be short of data.size().
  virtual int write(int fd, std::span<const char> data, std::size_t& written) = 0;
  virtual int truncate(int fd, std::uint64_t size) = 0;  // ftruncate
  virtual int sync_data(int fd) = 0;                     // fdatasync
  virtual int sync(int fd) = 0;                          // fsync (a directory)
};

// The real thing: POSIX calls.
StateFilesystem& posix_state_filesystem();

}  // namespace salttap
