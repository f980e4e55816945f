#include "indexer/index_layout.h"

#include <fmt/format.h>

namespace salttap::indexer {

std::string IndexLayout::index_name(std::string_view kind, Micros t) const {
  std::string name;
  name.reserve(prefix.size() + kind.size() + 13);
  name.append(prefix).append(1, '-').append(kind);
  if (!index_date) return name;
  // Every document names its index: the UTC day is the date of format_utc's
  // timestamp ("YYYY-MM-DDT..." with dots), not a gmtime_r and a format string.
  const std::string stamp = format_utc(t);
  const std::size_t date_end = stamp.find('T');  // after a year of four digits, or more, or a sign
  std::string date = stamp.substr(0, date_end);
  date[date_end - 3] = date[date_end - 6] = '.';
  name.append(1, '-').append(date);
  return name;
}

Micros job_index_time(std::string_view jid, Micros started_at) { return parse_jid_time(jid).value_or(started_at); }

bool is_entity_kind(std::string_view kind) {
  for (const auto k : kEntityKinds)
    if (k == kind) return true;
  return false;
}

std::string IndexLayout::entity_index(std::string_view kind) const { return fmt::format("{}-{}", prefix, kind); }

std::string IndexLayout::index_pattern(std::string_view kind) const {
  return index_date && !is_entity_kind(kind) ? fmt::format("{}-{}-*", prefix, kind)
                                             : fmt::format("{}-{}", prefix, kind);
}

std::string TemplateSettings::refresh_interval_for(std::string_view kind) const {
  if (kind != "jobs") return refresh_interval;
  if (jobs_refresh_interval) return *jobs_refresh_interval;
  return refresh_interval.empty() ? std::string(kJobsRefreshInterval) : refresh_interval;
}

}  // namespace salttap::indexer
