#pragma once
// CacheFilesystem: every file operation the job-cache reader makes, behind
// one seam, so tests make any of them fail (a directory the master keeps
// private, a file that vanishes mid-read) as a real master's cache can,
// whoever runs the tests. Errors are errno values, never exceptions.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "common/clock.h"

namespace salttap::jobcache {

struct CacheStat {
  bool is_dir = false;
  Micros mtime = 0;  // µs since the epoch
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;
  std::uint64_t size = 0;
};

// One directory's entries, read as they come (a bucket of a large cache is
// never held in memory at once). "." and ".." are left out.
class DirStream {
 public:
  virtual ~DirStream() = default;
  // The next entry: true and `name`, `is_dir` (symbolic links are not
  // directories); false at the end, or on an error (`error` then not 0).
  virtual bool next(std::string& name, bool& is_dir, int& error) = 0;
};

class CacheFilesystem {
 public:
  virtual ~CacheFilesystem() = default;
  // nullptr and `error` when the directory cannot be opened.
  virtual std::unique_ptr<DirStream> open_dir(const std::filesystem::path& dir, int& error) = 0;
  // 0, or the errno of stat(2).
  virtual int stat(const std::filesystem::path& path, CacheStat& out) = 0;
  // The whole file into `out`: 0, an errno, or EFBIG when it holds more than `max_bytes`.
  // `mtime`, when given, gets the file's modification time from the open file
  // (one stat fewer per file of a cache that holds millions).
  virtual int read_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string& out,
                        Micros* mtime) = 0;
  int read_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string& out) {
    return read_file(path, max_bytes, out, nullptr);
  }
};

// The real filesystem (POSIX calls).
CacheFilesystem& posix_cache_filesystem();

}  // namespace salttap::jobcache
