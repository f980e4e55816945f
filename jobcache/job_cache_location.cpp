#include "jobcache/job_cache_location.h"

#include <fmt/format.h>

#include "common/log.h"
#include "jobcache/internal/job_dir.h"

namespace salttap::jobcache {

std::optional<std::string> no_local_job_cache(const tap::MasterBus& m) {
  if (!m.job_cache) return "job_cache: False (the master stores no returns)";
  if (!m.ext_job_cache.empty())
    return fmt::format("ext_job_cache: {} (returns go to that returner, not to the local cache)", m.ext_job_cache);
  if (m.master_job_cache != "local_cache")
    return fmt::format("master_job_cache: {} (the job cache lives in that returner, not on disk)", m.master_job_cache);
  return std::nullopt;
}

JobCacheLocation job_cache_location(const tap::MasterBus& master, const std::optional<std::string>& cachedir,
                                    const char* who) {
  JobCacheLocation at{std::filesystem::path(cachedir.value_or(master.cachedir)) / "jobs", master.hash_type};
  if (!jobcache::jid_digest("", at.hash_type)) {
    log::warn("{}: hash_type {} is not a digest salttap knows: job directory names are not checked", who, at.hash_type);
    at.hash_type.clear();
  }
  return at;
}

}  // namespace salttap::jobcache
