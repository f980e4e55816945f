#include "correlator/correlator_config.h"

#include "common/text.h"

namespace salttap::correlator {

std::vector<DeadlineRule> default_deadlines() {
  constexpr Micros s = kMicrosPerSecond;
  return {
      // Quick answers: the CLI gives up after 5 s + find_job rounds; a minute is generous.
      {"test.ping", 60 * s},
      {"test.version", 60 * s},
      {"test.echo", 60 * s},
      {"grains.*", 60 * s},
      {"pillar.*", 120 * s},
      {"config.*", 60 * s},
      {"sys.*", 60 * s},
      {"saltutil.sync_*", 600 * s},
      {"saltutil.refresh_*", 300 * s},
      {"test.*", 300 * s},
      // Commands and file work.
      {"cmd.*", 900 * s},
      {"file.*", 600 * s},
      {"service.*", 600 * s},
      // Long runs: states and package management can take an hour on real fleets.
      {"state.*", 3600 * s},
      {"pkg.*", 3600 * s},
      {"system.*", 1800 * s},
      {"runner.*", 3600 * s},
      {"wheel.*", 300 * s},
      {"*", 900 * s},
  };
}

Micros CorrelatorConfig::deadline_for(const std::string& fun) const {
  if (missing_after) return *missing_after;
  for (const auto& rule : deadlines)
    if (glob_match(rule.fun, fun)) return rule.after;
  return 900 * kMicrosPerSecond;
}

}  // namespace salttap::correlator
