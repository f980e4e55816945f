#pragma once
// JobReader: reads one job directory of the cache into a CachedJob, or says
// why it will not be indexed (docs/backfill.md):
//
//   ready           a job to index
//   outside_window  its jid time is outside --since / --until
//   noise           saltutil.find_job and the correlator's other noise
//                   functions: never indexed, as on the bus
//   nocache         the master stored no returns for it (`nocache`): its
//                   verdict cannot be known
//   incomplete      no `jid` file, no `.load.p` or no `.minions.p` (yet):
//                   being created; read again later
//   undecodable     a file does not decode, e.g. `.load.p` read while the
//                   master writes it in place (before 3008): read again later
//   unreadable      an I/O error such as permission denied
//
// Only the `jid` file is read for a job outside the window, and only the
// load for a noise job.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "jobcache/cache_filesystem.h"
#include "jobcache/cached_job.h"
#include "jobcache/time_window.h"
#include "tap/decode_limits.h"

namespace salttap::jobcache {

enum class JobOutcome : std::uint8_t { ready, outside_window, noise, nocache, incomplete, undecodable, unreadable };
inline constexpr std::size_t kJobOutcomes = 7;
std::string_view to_string(JobOutcome o);
// Whether reading the job again later may give another outcome.
constexpr bool may_change(JobOutcome o) { return o == JobOutcome::incomplete || o == JobOutcome::undecodable; }

struct JobRead {
  JobOutcome outcome = JobOutcome::ready;
  std::filesystem::path dir;
  std::unique_ptr<CachedJob> job;  // ready: the job; otherwise whatever was read, or null
  std::string error;               // why, for incomplete, undecodable and unreadable (names the file)
  unsigned attempt = 1;            // 1 on the first read, more when read again
  bool misnamed = false;           // its directory is not named by the jid's digest under hash_type
};

struct JobReaderOptions {
  TimeWindow window;
  // Functions (globs) of jobs never indexed: the correlator's noise_funs.
  std::vector<std::string> noise_funs = {"saltutil.find_job", "saltutil.running"};
  tap::DecodeLimits limits;
  // The master's hash_type: a job directory not named by its jid's digest
  // (written under another hash_type, or moved) is still read, and marked.
  // Empty: not checked.
  std::string hash_type;
};

class JobReader {
 public:
  explicit JobReader(JobReaderOptions options, CacheFilesystem& fs = posix_cache_filesystem())
      : options_(std::move(options)), fs_(fs) {}
  JobRead read(const std::filesystem::path& dir) const;
  const JobReaderOptions& options() const { return options_; }

 private:
  bool is_noise(const msgpack::object& load) const;
  JobOutcome read_minions(CachedJob& job, std::string& error) const;

  JobReaderOptions options_;
  CacheFilesystem& fs_;
};

}  // namespace salttap::jobcache
