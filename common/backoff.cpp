#include "common/backoff.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <random>

namespace salttap {

UnitRandom system_unit_random() {
  struct Shared {
    std::mutex mutex;
    std::mt19937_64 engine{std::random_device{}()};
    std::uniform_real_distribution<double> unit{0.0, 1.0};
  };
  auto shared = std::make_shared<Shared>();
  return [shared] {
    std::lock_guard lock(shared->mutex);
    return shared->unit(shared->engine);
  };
}

std::chrono::milliseconds full_jitter_delay(const BackoffPolicy& policy, unsigned attempt, double unit_random) {
  const long long max = std::max<long long>(0, policy.max.count());
  const long long initial = std::max<long long>(0, policy.initial.count());
  // initial * 2^attempt, computed only when it cannot overflow (it is then <= max).
  const long long cap = attempt < 62 && initial <= (max >> attempt) ? initial << attempt : max;
  if (!(unit_random > 0)) unit_random = 0;  // also NaN
  // Every whole millisecond in [0, cap] is equally likely.
  const double scaled = std::floor(std::min(unit_random, 1.0) * (static_cast<double>(cap) + 1.0));
  return std::chrono::milliseconds(std::min(cap, static_cast<long long>(scaled)));
}

}  // namespace salttap
