#pragma once
// Shared by the fleet's fake-clock tests: the start of their clock, a second
// of it, and the kinds of a list of alerts (what a test compares against).

#include <string>
#include <vector>

#include "common/clock.h"
#include "correlator/alert.h"

namespace salttap::testing {

inline constexpr Micros kSec = kMicrosPerSecond;
inline constexpr Micros kT0 = 1'800'000'000 * kSec;

inline std::vector<std::string> kinds(const std::vector<correlator::Alert>& alerts) {
  std::vector<std::string> out;
  for (const auto& a : alerts) out.emplace_back(correlator::to_string(a.kind));
  return out;
}

}  // namespace salttap::testing
