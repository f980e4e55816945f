#pragma once
// Where the master keeps its job cache, for `backfill` and for `run`'s
// reconcile (docs/backfill.md): <cachedir>/jobs, with the job directories
// named under the master's hash_type; or why there is none salttap can
// read (job_cache off, or the cache kept by another returner).

#include <filesystem>
#include <optional>
#include <string>

#include "tap/master_config.h"

namespace salttap::jobcache {

struct JobCacheLocation {
  std::filesystem::path jobs_dir;
  std::string hash_type;  // empty: a digest salttap does not know, names not checked (logged once)
};

// Why the master keeps no local job cache salttap can read, if it does not.
[[nodiscard]] std::optional<std::string> no_local_job_cache(const tap::MasterBus& master);

// The cache of `master`, or `cachedir` instead of the master's; `who`
// prefixes the WARN about an unknown hash_type.
JobCacheLocation job_cache_location(const tap::MasterBus& master, const std::optional<std::string>& cachedir,
                                    const char* who);

}  // namespace salttap::jobcache
