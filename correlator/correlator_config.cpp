#include "correlator/correlator_config.h"

#include "common/text.h"

namespace salttap::correlator {

std::vector<DeadlineRule> default_deadlines() {
  constexpr Micros kSecond = kMicrosPerSecond;
  return {
      // Quick answers: the CLI gives up after 5 s + find_job rounds; a minute is generous.
      {"test.ping", 60 * kSecond},
      {"test.version", 60 * kSecond},
      {"test.echo", 60 * kSecond},
      {"grains.*", 60 * kSecond},
      {"pillar.*", 120 * kSecond},
      {"config.*", 60 * kSecond},
      {"sys.*", 60 * kSecond},
      {"saltutil.sync_*", 600 * kSecond},
      {"saltutil.refresh_*", 300 * kSecond},
      {"test.*", 300 * kSecond},
      // Commands and file work.
      {"cmd.*", 900 * kSecond},
      {"file.*", 600 * kSecond},
      {"service.*", 600 * kSecond},
      // Long runs: states and package management can take an hour on real fleets.
      {"state.*", 3600 * kSecond},
      {"pkg.*", 3600 * kSecond},
      {"system.*", 1800 * kSecond},
      {"runner.*", 3600 * kSecond},
      {"wheel.*", 300 * kSecond},
      {"*", 900 * kSecond},
  };
}

Micros CorrelatorConfig::deadline_for(const std::string& fun) const {
  if (missing_after) return *missing_after;
  for (const auto& rule : deadlines)
    if (glob_match(rule.fun, fun)) return rule.after;
  return 900 * kMicrosPerSecond;
}

}  // namespace salttap::correlator
