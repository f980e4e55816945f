#pragma once
// Fake monotonic time for unit tests: time moves only when the test calls
// advance(). Threads blocked in wait_until() wake when their `done` holds or
// when advance() carries the clock past their deadline; the test can wait
// until a given number of threads are blocked (await_waiters) before moving
// time, so "the shipper is sleeping in its backoff" is an observed state,
// never a guess about how long a thread takes.
//
// A thread counts as waiting only while its deadline is still ahead: once
// time reaches it, the thread is on its way out, and counts again only when
// it enters its next wait. So "advance, then await the next wait" never
// mistakes the old wait for the new one.
//
// Time moves only once every thread counted as waiting has looked at its
// `done` again after the move was decided, and still waits. A thread that
// another one has notified (its `done` holds now) stays registered until the
// scheduler runs it again; without that look, a busy machine could leave it
// counted, and time would jump to the next deadline of the others - past
// everything that thread is about to do (a shipper's preparer handed a batch
// on, its worker asleep in a 15 s backoff: time would jump those 15 s).

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
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
    for (;;) {
      const std::uint64_t asked = probes();  // before `done`: the answer covers this probe
      if (done() || now() >= deadline) break;
      still_waiting(id, asked);
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

  // Moves the clock to the earliest deadline still ahead (no-op when none is),
  // once every waiting thread has looked at its wait again (see above).
  // A deadline more than kUntimed ahead is how code spells "as long as it
  // takes" (a wait only a notification ends): such a thread counts as
  // waiting, but time never jumps to it.
  void advance_to_next_deadline() {
    while (advance_if_still(0, changes()) == Step::changed) {
    }
  }

  // Threads blocked in wait_until() whose deadline is still ahead.
  [[nodiscard]] std::size_t waiters() const {
    std::lock_guard lock(mutex_);
    return ahead();
  }

  // Blocks until at least `n` threads wait for a deadline still ahead. A test
  // whose threads never get there is broken: after `limit` of real time this
  // throws rather than hang the suite.
  void await_waiters(std::size_t n, std::chrono::seconds limit = kLimit) const {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, limit, [&] { return ahead() >= n; }))
      throw std::runtime_error("FakeSteadyTime: threads never reached their timed wait");
  }

  // Runs time forward until `done()` holds: each step waits until `n` threads
  // wait (as await_waiters), checks `done()` while they are all blocked, and
  // only then moves to the earliest deadline, if `n` threads still wait once
  // each has looked at its wait again. The threads under test see time pass
  // only while all `n` of them wait, as on an infinitely fast machine, and
  // time never moves past the state the test waits for. Throws after `limit`
  // of real time.
  void advance_until(const std::function<bool()>& done, std::size_t n = 1, std::chrono::seconds limit = kLimit) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      std::unique_lock lock(mutex_);
      // Short real-time slices: `done` (which this lock does not guard) may come true meanwhile.
      if (!changed_.wait_for(lock, std::chrono::milliseconds(1), [&] { return ahead() >= n; })) {
        if (std::chrono::steady_clock::now() > give_up)
          throw std::runtime_error("FakeSteadyTime: the awaited state never came");
        continue;
      }
      // What `done` is about to see: time moves only if no thread entered or
      // left a wait since, so `done` still speaks for the state time leaves.
      const std::uint64_t seen = changes_;
      lock.unlock();
      if (done()) return;
      (void)advance_if_still(n, seen);
    }
  }

 private:
  static constexpr std::chrono::seconds kLimit{60};
  static constexpr std::chrono::hours kUntimed{24 * 100};

  struct Waiter {
    unsigned long id;
    time_point deadline;
    std::uint64_t answered = 0;  // the last probe after which its `done` was false
  };

  enum class Step : std::uint8_t { moved, nothing_ahead, changed };

  // Moves to the earliest deadline ahead, once every thread waiting for a
  // deadline ahead has answered a new probe (looked at its `done` again and
  // still waits), and only if no thread entered or left a wait since the
  // count `seen` of such changes and at least `n` wait: the state the caller
  // judged is the state time moves from. `changed` otherwise: look again.
  Step advance_if_still(std::size_t n, std::uint64_t seen) {
    std::unique_lock lock(mutex_);
    const std::uint64_t probe = ++probes_;
    const bool answered = changed_.wait_for(lock, kLimit, [&] {
      return changes_ != seen || std::all_of(waiting_.begin(), waiting_.end(), [&](const Waiter& w) {
               return w.deadline <= now_ || w.answered >= probe;
             });
    });
    if (!answered) throw std::runtime_error("FakeSteadyTime: a waiting thread never looked at its wait again");
    if (changes_ != seen || ahead() < n) return Step::changed;
    time_point earliest = time_point::max();
    for (const Waiter& w : waiting_)
      if (w.deadline > now_ && w.deadline - now_ < kUntimed) earliest = std::min(earliest, w.deadline);
    if (earliest == time_point::max()) return Step::nothing_ahead;
    now_ = earliest;
    lock.unlock();
    changed_.notify_all();
    return Step::moved;
  }
  std::uint64_t changes() const {
    std::lock_guard lock(mutex_);
    return changes_;
  }
  std::uint64_t probes() const {
    std::lock_guard lock(mutex_);
    return probes_;
  }
  void still_waiting(unsigned long id, std::uint64_t probe) {
    {
      std::lock_guard lock(mutex_);
      for (Waiter& w : waiting_)
        if (w.id == id && w.answered < probe) w.answered = probe;
    }
    changed_.notify_all();
  }

  std::size_t ahead() const {
    return static_cast<std::size_t>(
        std::count_if(waiting_.begin(), waiting_.end(), [&](const Waiter& w) { return w.deadline > now_; }));
  }
  unsigned long enter(time_point deadline) {
    std::lock_guard lock(mutex_);
    waiting_.push_back({++next_id_, deadline});
    ++changes_;
    changed_.notify_all();
    return next_id_;
  }
  void leave(unsigned long id) {
    std::lock_guard lock(mutex_);
    std::erase_if(waiting_, [id](const Waiter& w) { return w.id == id; });
    ++changes_;
    changed_.notify_all();
  }

  mutable std::mutex mutex_;
  mutable std::condition_variable_any changed_;
  time_point now_{std::chrono::hours(1)};
  std::vector<Waiter> waiting_;
  unsigned long next_id_ = 0;
  std::uint64_t probes_ = 0;   // advances decided: each waits for every waiter's answer
  std::uint64_t changes_ = 0;  // waits entered and left
};

}  // namespace salttap::testing
