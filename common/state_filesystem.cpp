#include "common/state_filesystem.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace salttap {
namespace {

namespace fs = std::filesystem;

// Runs `call` (a syscall returning -1 and errno on failure) until it is not
// interrupted; 0 or the errno.
template <typename Call>
int retry(Call call) {
  for (;;) {
    if (call() >= 0) return 0;
    if (errno != EINTR) return errno;
  }
}

class PosixStateFilesystem final : public StateFilesystem {
 public:
  using StateFilesystem::open;

  int kind_of(const Path& p, FileKind& kind) override {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      kind = FileKind::missing;
      return errno == ENOENT || errno == ENOTDIR ? 0 : errno;
    }
    kind = S_ISDIR(st.st_mode) ? FileKind::directory : S_ISREG(st.st_mode) ? FileKind::regular : FileKind::other;
    return 0;
  }

  int create_directories(const Path& dir) override {
    std::error_code ec;
    fs::create_directories(dir, ec);
    return ec ? ec.value() : 0;
  }

  int check_writable(const Path& dir) override { return ::access(dir.c_str(), W_OK | X_OK) == 0 ? 0 : errno; }

  int list_directory(const Path& dir, std::vector<DirectoryEntry>& entries) override {
    entries.clear();
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code type_ec;
      const auto status = it->status(type_ec);  // follows symlinks, as open() will
      const FileKind kind = fs::is_regular_file(status) ? FileKind::regular
                            : fs::is_directory(status)  ? FileKind::directory
                                                        : FileKind::other;
      entries.push_back(DirectoryEntry{it->path().filename().string(), kind});
    }
    return ec ? ec.value() : 0;
  }

  int rename(const Path& from, const Path& to) override { return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno; }

  int remove(const Path& p) override { return ::unlink(p.c_str()) == 0 ? 0 : errno; }

  int open(const Path& p, int flags, int& fd, unsigned mode) override {
    return retry([&] { return fd = ::open(p.c_str(), flags | O_CLOEXEC, static_cast<mode_t>(mode)); });
  }

  // close(2) is not retried on EINTR: on Linux the descriptor is gone anyway.
  int close(int fd) override { return ::close(fd) == 0 ? 0 : errno; }

  int lock_exclusive(int fd) override {
    return retry([&] { return ::flock(fd, LOCK_EX | LOCK_NB); });
  }

  int file_size(int fd, std::uint64_t& size) override {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return errno;
    size = static_cast<std::uint64_t>(st.st_size);
    return 0;
  }

  int read_at(int fd, std::uint64_t offset, std::span<unsigned char> out, std::size_t& n) override {
    ssize_t r = 0;
    const int e = retry([&] { return r = ::pread(fd, out.data(), out.size(), static_cast<off_t>(offset)); });
    n = e == 0 ? static_cast<std::size_t>(r) : 0;
    return e;
  }

  int write(int fd, std::span<const char> data, std::size_t& written) override {
    ssize_t w = 0;
    const int e = retry([&] { return w = ::write(fd, data.data(), data.size()); });
    written = e == 0 ? static_cast<std::size_t>(w) : 0;
    return e;
  }

  int truncate(int fd, std::uint64_t size) override {
    return retry([&] { return ::ftruncate(fd, static_cast<off_t>(size)); });
  }

  int sync_data(int fd) override {
    return retry([&] { return ::fdatasync(fd); });
  }

  int sync(int fd) override {
    return retry([&] { return ::fsync(fd); });
  }
};

}  // namespace

StateFilesystem& posix_state_filesystem() {
  static PosixStateFilesystem instance;
  return instance;
}

}  // namespace salttap
