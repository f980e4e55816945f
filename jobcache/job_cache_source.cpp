#include "jobcache/job_cache_source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/access_advice.h"

namespace salttap::jobcache {
namespace fs = std::filesystem;

std::string access_advice(CacheFilesystem& fs, const fs::path& path, int error) {
  return salttap::access_advice(path, error, "read the job cache at", Access::read_tree,
                                [&fs](const fs::path& p, PathOwner& out) {
                                  CacheStat st;
                                  const int e = fs.stat(p, st);
                                  out = {st.uid, st.gid, st.mode};
                                  return e;
                                });
}

JobCacheSource::JobCacheSource(fs::path jobs_dir, JobReaderOptions reader, RetryPolicy retry, CacheFilesystem& fs,
                               SteadyTime& time)
    : jobs_dir_(std::move(jobs_dir)), reader_(std::move(reader), fs), retry_(retry), fs_(fs), time_(time) {}

Result<void, CacheAccessError> JobCacheSource::open() {
  CacheStat st;
  if (const int e = fs_.stat(jobs_dir_, st); e != 0) {
    if (e == ENOENT)
      return CacheAccessError{e, fmt::format("no job cache at {}: the master has not stored a job yet, or its cachedir "
                                             "is elsewhere (the master config's cachedir, or --cachedir)",
                                             jobs_dir_.string())};
    return CacheAccessError{e, access_advice(fs_, jobs_dir_, e)};
  }
  if (!st.is_dir) return CacheAccessError{ENOTDIR, jobs_dir_.string() + ": not a directory"};
  int e = 0;
  auto top = fs_.open_dir(jobs_dir_, e);
  if (!top) return CacheAccessError{e, access_advice(fs_, jobs_dir_, e)};
  std::string name;
  bool is_dir = false;
  while (top->next(name, is_dir, e))
    if (is_dir && !name.starts_with('.')) buckets_.push_back(name);
  if (e != 0) return CacheAccessError{e, access_advice(fs_, jobs_dir_, e)};
  std::sort(buckets_.begin(), buckets_.end());
  // The total, for progress: names only, one bucket at a time.
  for (const std::string& bucket : buckets_) {
    auto jobs = fs_.open_dir(jobs_dir_ / bucket, e);
    if (!jobs) continue;  // counted when it is read
    while (jobs->next(name, is_dir, e))
      if (is_dir && !name.starts_with('.')) ++stats_.job_dirs;
  }
  return success();
}

bool JobCacheSource::next_fresh_dir(fs::path& dir) {
  std::string name;
  bool is_dir = false;
  int e = 0;
  while (true) {
    if (bucket_) {
      if (bucket_->next(name, is_dir, e)) {
        if (!is_dir || name.starts_with('.')) continue;
        dir = bucket_path_ / name;
        return true;
      }
      if (e != 0) {
        ++stats_.unreadable_buckets;
        bucket_errors_.push_back(access_advice(fs_, bucket_path_, e));
      }
      bucket_.reset();
    }
    if (next_bucket_ >= buckets_.size()) return false;
    bucket_path_ = jobs_dir_ / buckets_[next_bucket_++];
    bucket_ = fs_.open_dir(bucket_path_, e);
    if (!bucket_) {
      ++stats_.unreadable_buckets;
      bucket_errors_.push_back(access_advice(fs_, bucket_path_, e));
    }
  }
}

bool JobCacheSource::queue(JobRead& read) {
  if (read.attempt >= retry_.attempts || waiting_.size() >= retry_.max_waiting) return false;
  waiting_.push_back({read.dir, read.attempt, time_.now() + retry_.delay});
  return true;
}

bool JobCacheSource::finish(JobRead&& read, JobRead& out) {
  if (may_change(read.outcome) && queue(read)) return false;
  ++stats_.read;
  ++stats_.outcomes[static_cast<std::size_t>(read.outcome)];
  if (read.outcome == JobOutcome::ready) stats_.pending_return_dirs += read.job->pending_return_dirs();
  if (read.misnamed) ++stats_.misnamed;
  out = std::move(read);
  return true;
}

bool JobCacheSource::next(JobRead& out) {
  while (true) {
    if (!waiting_.empty() && waiting_.front().due <= time_.now()) {
      const Waiting w = std::move(waiting_.front());
      waiting_.pop_front();
      ++stats_.retries;
      JobRead again = reader_.read(w.dir);
      again.attempt = w.attempts + 1;
      if (finish(std::move(again), out)) return true;
      continue;
    }
    if (fs::path dir; next_fresh_dir(dir)) {
      if (finish(reader_.read(dir), out)) return true;
      continue;
    }
    if (waiting_.empty()) return false;
    time_.sleep_for(waiting_.front().due - time_.now());
  }
}

bool JobCacheSource::retry_later(JobRead&& failed) {
  // It was handed out (and counted) ready.
  --stats_.read;
  --stats_.outcomes[static_cast<std::size_t>(JobOutcome::ready)];
  if (failed.job) stats_.pending_return_dirs -= failed.job->pending_return_dirs();
  if (failed.misnamed) --stats_.misnamed;
  failed.outcome = JobOutcome::undecodable;
  failed.job.reset();
  if (queue(failed)) return true;
  ++stats_.read;
  ++stats_.outcomes[static_cast<std::size_t>(JobOutcome::undecodable)];
  if (failed.misnamed) ++stats_.misnamed;
  return false;
}

std::vector<std::string> JobCacheSource::take_bucket_errors() {
  std::vector<std::string> out;
  out.swap(bucket_errors_);
  return out;
}

}  // namespace salttap::jobcache
