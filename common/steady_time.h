#pragma once
// Monotonic time and timed waits behind one seam. Every batch window,
// timeout, backoff sleep and drain deadline in salttap reads this clock and
// waits through it, so unit tests run them on fake time
// (tests/support/fake_steady_time.h) and no test's outcome depends on how
// fast the machine is. Wall-clock time (document dates, deadlines of Salt
// jobs) is the other seam, Clock in common/clock.h.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace salttap {

class SteadyTime {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;

  virtual ~SteadyTime() = default;

  [[nodiscard]] virtual time_point now() const = 0;

  // Waits on `cv` until `done()` holds or this clock reaches `deadline`.
  // `lock` (on the mutex guarding what `done` reads) is held on entry and on
  // return. Returns done(). Whoever makes `done` true notifies `cv`.
  virtual bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, time_point deadline,
                          const std::function<bool()>& done) = 0;

  bool wait_for(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, duration timeout,
                const std::function<bool()>& done) {
    return wait_until(lock, cv, now() + timeout, done);
  }

  // A plain sleep, for a thread with nothing that could wake it early.
  void sleep_for(duration timeout);
};

// The process's steady clock (std::chrono::steady_clock, condition-variable waits).
SteadyTime& real_steady_time();

}  // namespace salttap
