#pragma once
// The one retry policy of salttap: capped exponential backoff with full
// jitter. Retry number n (0-based) waits a uniform whole number of
// milliseconds in [0, min(max, initial * 2^n)]. Full jitter spreads many
// salttaps (or many workers) retrying against one engine or webhook, so they
// do not come back in step after an outage.
//
// Every retry loop uses it: the bulk shipper, index setup, the alert outlets
// and the bus readers' reconnects. Randomness is injected so tests can pin it.

#include <chrono>
#include <functional>

namespace salttap {

struct BackoffPolicy {
  std::chrono::milliseconds initial{500};
  std::chrono::milliseconds max{60'000};
};

// A source of doubles in [0, 1).
using UnitRandom = std::function<double()>;
// Seeded from std::random_device; safe to call from several threads.
UnitRandom system_unit_random();

// The delay before retry `attempt` (0-based); pure, so it is table-tested.
// `unit_random` outside [0, 1) (or NaN) is clamped.
[[nodiscard]] std::chrono::milliseconds full_jitter_delay(const BackoffPolicy& policy, unsigned attempt,
                                                          double unit_random);

// The running state of one retry loop: next() after each failure, reset()
// after a success.
class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy, UnitRandom random = system_unit_random())
      : policy_(policy), random_(std::move(random)) {}

  [[nodiscard]] std::chrono::milliseconds next() { return full_jitter_delay(policy_, failures_++, random_()); }
  void reset() { failures_ = 0; }
  [[nodiscard]] unsigned failures() const { return failures_; }
  [[nodiscard]] const BackoffPolicy& policy() const { return policy_; }

 private:
  BackoffPolicy policy_;
  UnitRandom random_;
  unsigned failures_ = 0;
};

}  // namespace salttap
