#pragma once
// JobCacheSource: the master's job cache as a source of jobs, one job
// directory at a time (docs/backfill.md). It walks <cachedir>/jobs/<H[0:2]>/
// <H[2:]>/ as the directories come (nothing of the cache is held beyond the
// job being read), reads each with the JobReader, and reads a job again
// later when it may have been caught mid-write (incomplete, undecodable):
// between fresh directories, at least `retry.delay` apart, `retry.attempts`
// reads in all, after which it is counted and skipped.
//
// Single-threaded; waits (only for a retry that is not due yet, once every
// fresh directory was read) through SteadyTime.

#include <array>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/steady_time.h"
#include "jobcache/cache_filesystem.h"
#include "jobcache/job_reader.h"

namespace salttap::jobcache {

struct RetryPolicy {
  unsigned attempts = 3;                 // reads of a job in all
  std::chrono::milliseconds delay{500};  // between two reads of one job
  std::size_t max_waiting = 10'000;      // jobs waiting for their next read; beyond, no retry
};

struct JobCacheStats {
  std::uint64_t job_dirs = 0;  // job directories counted when the cache was opened
  std::uint64_t read = 0;      // jobs read to an outcome (retries not counted twice)
  std::array<std::uint64_t, kJobOutcomes> outcomes{};
  std::uint64_t retries = 0;              // second and later reads
  std::uint64_t unreadable_buckets = 0;   // bucket directories that could not be listed
  std::uint64_t pending_return_dirs = 0;  // minion directories without return.p (ready jobs)
  std::uint64_t misnamed = 0;             // jobs read whose directory is not named under hash_type
  std::uint64_t count(JobOutcome o) const { return outcomes[static_cast<std::size_t>(o)]; }
};

// Why the cache cannot be read at all, and what to change.
struct CacheAccessError {
  int error = 0;        // errno
  std::string message;  // names the path, its owner and group, salttap's user, the fix
};

class JobCacheSource {
 public:
  JobCacheSource(std::filesystem::path jobs_dir, JobReaderOptions reader, RetryPolicy retry = {},
                 CacheFilesystem& fs = posix_cache_filesystem(), SteadyTime& time = real_steady_time());

  // Checks that the jobs directory can be listed and counts its job
  // directories (names only). Call once, before next().
  Result<void, CacheAccessError> open();
  // The next job read to an outcome (any but a pending retry); false once
  // every directory was read. A bucket that cannot be listed is counted and
  // reported through `bucket_errors()`.
  [[nodiscard]] bool next(JobRead& out);
  // A ready job whose events then failed (a return.p that does not decode):
  // queued to be read again, true; or, out of attempts, counted undecodable,
  // false.
  [[nodiscard]] bool retry_later(JobRead&& failed);

  const JobCacheStats& stats() const { return stats_; }
  // Buckets that could not be listed since the last call ("<path>: <why>").
  std::vector<std::string> take_bucket_errors();
  const std::filesystem::path& jobs_dir() const { return jobs_dir_; }

 private:
  struct Waiting {
    std::filesystem::path dir;
    unsigned attempts;  // reads so far
    SteadyTime::time_point due;
  };
  bool next_fresh_dir(std::filesystem::path& dir);
  bool finish(JobRead&& read, JobRead& out);  // true when `read` is final (counted, handed out)
  bool queue(JobRead& read);

  std::filesystem::path jobs_dir_;
  JobReader reader_;
  RetryPolicy retry_;
  CacheFilesystem& fs_;
  SteadyTime& time_;
  JobCacheStats stats_;
  std::vector<std::string> buckets_;  // names, sorted
  std::size_t next_bucket_ = 0;
  std::unique_ptr<DirStream> bucket_;
  std::filesystem::path bucket_path_;
  std::deque<Waiting> waiting_;  // by due time (one delay for all)
  std::vector<std::string> bucket_errors_;
};

// What to say when `path` cannot be read: its owner, group and mode,
// salttap's user, and what to change (Salt 3006+ packages run the master as
// user `salt`).
std::string access_advice(CacheFilesystem& fs, const std::filesystem::path& path, int error);

}  // namespace salttap::jobcache
