#include "jobcache/cache_filesystem.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace salttap::jobcache {
namespace {

Micros mtime_of(const struct stat& st) {
  return static_cast<Micros>(st.st_mtim.tv_sec) * kMicrosPerSecond + st.st_mtim.tv_nsec / 1000;
}

class PosixDirStream final : public DirStream {
 public:
  explicit PosixDirStream(DIR* dir) : dir_(dir) {}
  ~PosixDirStream() override { ::closedir(dir_); }
  PosixDirStream(const PosixDirStream&) = delete;
  PosixDirStream& operator=(const PosixDirStream&) = delete;

  bool next(std::string& name, bool& is_dir, int& error) override {
    error = 0;
    while (true) {
      errno = 0;
      const dirent* e = ::readdir(dir_);
      if (e == nullptr) {
        error = errno;
        return false;
      }
      const std::string_view n(e->d_name);
      if (n == "." || n == "..") continue;
      name.assign(n);
      if (e->d_type == DT_UNKNOWN) {  // some filesystems do not say: ask
        struct stat st {};
        is_dir = ::fstatat(::dirfd(dir_), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
      } else {
        is_dir = e->d_type == DT_DIR;
      }
      return true;
    }
  }

 private:
  DIR* dir_;
};

class PosixCacheFilesystem final : public CacheFilesystem {
 public:
  using CacheFilesystem::read_file;
  std::unique_ptr<DirStream> open_dir(const std::filesystem::path& dir, int& error) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
      error = errno;
      return nullptr;
    }
    error = 0;
    return std::make_unique<PosixDirStream>(d);
  }

  int stat(const std::filesystem::path& path, CacheStat& out) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return errno;
    out.is_dir = S_ISDIR(st.st_mode);
    out.mtime = mtime_of(st);
    out.uid = st.st_uid;
    out.gid = st.st_gid;
    out.mode = st.st_mode;
    out.size = static_cast<std::uint64_t>(st.st_size);
    return 0;
  }

  int read_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string& out, Micros* mtime) override {
    out.clear();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    int result = 0;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      result = errno;
    } else if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
      result = EFBIG;
    } else {
      if (mtime != nullptr) *mtime = mtime_of(st);
      // The size is a hint: a file being written may grow (then its decoding
      // fails and it is read again later) or shrink. One byte more than the
      // size is asked for, so that a short read, which a regular file gives
      // only at its end, saves the read that would return 0: a cache of
      // millions of small files pays one read each, not two.
      out.resize(static_cast<std::size_t>(std::min<std::uint64_t>(max_bytes, st.st_size + 1)));
      std::size_t got = 0;
      while (true) {
        if (got == out.size()) {
          if (out.size() >= max_bytes) break;
          out.resize(std::min<std::uint64_t>(max_bytes, out.size() + 4096));
        }
        const std::size_t asked = out.size() - got;
        const ssize_t n = ::read(fd, out.data() + got, asked);
        if (n < 0) {
          if (errno == EINTR) continue;
          result = errno;
          break;
        }
        got += static_cast<std::size_t>(n);
        if (n == 0 || (S_ISREG(st.st_mode) && static_cast<std::size_t>(n) < asked)) break;
      }
      out.resize(got);
      if (result == 0 && got >= max_bytes) {
        char extra = 0;
        if (::read(fd, &extra, 1) > 0) result = EFBIG;
      }
    }
    ::close(fd);
    return result;
  }
};

}  // namespace

CacheFilesystem& posix_cache_filesystem() {
  static PosixCacheFilesystem instance;
  return instance;
}

}  // namespace salttap::jobcache
