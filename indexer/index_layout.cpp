#include "indexer/index_layout.h"

#include <ctime>

#include <fmt/format.h>

namespace salttap::indexer {

std::string IndexLayout::index_name(std::string_view kind, Micros t) const {
  if (!index_date) return fmt::format("{}-{}", prefix, kind);
  auto secs = static_cast<std::time_t>(t / kMicrosPerSecond);
  if (t < 0 && t % kMicrosPerSecond) --secs;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{}-{}-{:04}.{:02}.{:02}", prefix, kind, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

Micros job_index_time(std::string_view jid, Micros started_at) { return parse_jid_time(jid).value_or(started_at); }

std::string IndexLayout::index_pattern(std::string_view kind) const {
  return index_date ? fmt::format("{}-{}-*", prefix, kind) : fmt::format("{}-{}", prefix, kind);
}

std::string TemplateSettings::refresh_interval_for(std::string_view kind) const {
  if (kind != "jobs") return refresh_interval;
  if (jobs_refresh_interval) return *jobs_refresh_interval;
  return refresh_interval.empty() ? std::string(kJobsRefreshInterval) : refresh_interval;
}

}  // namespace salttap::indexer
