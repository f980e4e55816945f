#include "common/steady_time.h"

namespace salttap {
namespace {

class RealSteadyTime final : public SteadyTime {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
  bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, time_point deadline,
                  const std::function<bool()>& done) override {
    // A deadline already past is a look, not a wait: std::condition_variable
    // would still enter the kernel (a futex wait that times out at once, and a
    // context switch) for each of the shipper's zero-wait looks at its lanes.
    while (!done()) {
      if (now() >= deadline) return false;
      cv.wait_until(lock, deadline);
    }
    return true;
  }
};

}  // namespace

void SteadyTime::sleep_for(duration timeout) {
  std::mutex mutex;
  std::condition_variable cv;
  std::unique_lock lock(mutex);
  wait_for(lock, cv, timeout, [] { return false; });
}

SteadyTime& real_steady_time() {
  static RealSteadyTime instance;
  return instance;
}

}  // namespace salttap
