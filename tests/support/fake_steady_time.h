#pragma once
// Fake monotonic time for unit tests: time moves only when the test calls
// advance(). Threads blocked in wait_until() wake when their `done` holds or
// when advance() carries the clock past their deadline; the test can wait
// until a given number of threads are blocked (await_waiters) before moving
// time, so "the shipper is sleeping in its backoff" is an observed state,
// never a guess about how long a thread takes.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "common/steady_time.h"

namespace salttap::testing {

class FakeSteadyTime final : public SteadyTime {
 public:
  time_point now() const override {
    std::lock_guard lock(mutex_);
    return now_;
  }

  bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, time_point deadline,
                  const std::function<bool()>& done) override {
    const auto id = enter(deadline);
    while (!done() && now() < deadline) {
      // Real time only paces the re-check of `done` and of the fake clock; it
      // never decides the outcome.
      cv.wait_for(lock, std::chrono::milliseconds(1));
    }
    leave(id);
    return done();
  }

  void advance(duration d) {
    {
      std::lock_guard lock(mutex_);
      now_ += d;
    }
    changed_.notify_all();
  }

  // Moves the clock to the earliest deadline any thread waits for (no-op when none waits).
  void advance_to_next_deadline() {
    std::unique_lock lock(mutex_);
    if (waiting_.empty()) return;
    const auto earliest = std::min_element(waiting_.begin(), waiting_.end(),
                                           [](const Waiter& a, const Waiter& b) { return a.deadline < b.deadline; });
    if (earliest->deadline > now_) now_ = earliest->deadline;
    lock.unlock();
    changed_.notify_all();
  }

  [[nodiscard]] std::size_t waiters() const {
    std::lock_guard lock(mutex_);
    return waiting_.size();
  }

  // Blocks until at least `n` threads wait in wait_until(). A test whose
  // threads never get there is broken: after `limit` of real time this
  // throws rather than hang the suite.
  void await_waiters(std::size_t n, std::chrono::seconds limit = std::chrono::seconds(60)) const {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, limit, [&] { return waiting_.size() >= n; }))
      throw std::runtime_error("FakeSteadyTime: threads never reached their timed wait");
  }

 private:
  struct Waiter {
    unsigned long id;
    time_point deadline;
  };

  unsigned long enter(time_point deadline) {
    std::lock_guard lock(mutex_);
    waiting_.push_back({++next_id_, deadline});
    changed_.notify_all();
    return next_id_;
  }
  void leave(unsigned long id) {
    std::lock_guard lock(mutex_);
    std::erase_if(waiting_, [id](const Waiter& w) { return w.id == id; });
    changed_.notify_all();
  }

  mutable std::mutex mutex_;
  mutable std::condition_variable_any changed_;
  time_point now_{std::chrono::hours(1)};
  std::vector<Waiter> waiting_;
  unsigned long next_id_ = 0;
};

}  // namespace salttap::testing
