// The async outlet base on fake time: send() never waits for delivery, a
// full queue drops (counted), failed attempts are retried after the common
// backoff until max_attempts, and stop() drains the queue, retries included,
// until its deadline, then interrupts the attempt in progress and gives up
// the rest (counted). No test depends on how fast the machine is: time
// moves only when the test moves it, and every "the worker is at X" is
// awaited as a state.

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <stdexcept>

#include "alerting/async_alert_outlet.h"
#include "tests/support/fake_steady_time.h"

namespace salttap::alerting {
namespace {

using namespace std::chrono_literals;
using correlator::Alert;
using correlator::AlertKind;
using salttap::testing::FakeSteadyTime;

// The top of every jitter range: each wait is min(max, initial * 2^n).
constexpr double kTop = 0.999999;

Alert alert(const std::string& jid) { return {AlertKind::failed, {AlertKind::failed}, jid, "{}", 0, 0}; }

// deliver() answers from a script ("" = delivered; anything else = that
// error; script empty: delivered); with hold(), an attempt blocks until
// release() or interrupt().
class ScriptedOutlet final : public AsyncAlertOutlet {
 public:
  ScriptedOutlet(RetryPolicy policy, FakeSteadyTime& time, std::deque<std::string> script = {})
      : AsyncAlertOutlet("scripted", policy, time, [] { return kTop; }), script_(std::move(script)) {
    start();
  }
  ~ScriptedOutlet() override { stop(0ms); }

  void hold() {
    std::lock_guard lock(mutex_);
    held_ = true;
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      held_ = false;
    }
    cv_.notify_all();
  }
  // Blocks until deliver() was called `n` times (throws after a minute: a broken test).
  void await_attempts(std::size_t n) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, 60s, [&] { return jids_.size() >= n; }))
      throw std::runtime_error("the worker never made the awaited attempt");
  }
  std::vector<std::string> jids() {
    std::lock_guard lock(mutex_);
    return jids_;
  }

 private:
  std::string deliver(const Alert& a) override {
    std::unique_lock lock(mutex_);
    jids_.push_back(a.jid);
    cv_.notify_all();
    cv_.wait(lock, [&] { return !held_ || interrupted_; });
    if (interrupted_) return "interrupted";
    if (script_.empty()) return {};
    std::string outcome = std::move(script_.front());
    script_.pop_front();
    return outcome;
  }
  void interrupt() override {
    {
      std::lock_guard lock(mutex_);
      interrupted_ = true;
    }
    cv_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::string> script_;
  std::vector<std::string> jids_;
  bool held_ = false;
  bool interrupted_ = false;
};

RetryPolicy policy(int max_attempts = 8, std::size_t queue_cap = 100) {
  RetryPolicy p;
  p.max_attempts = max_attempts;
  p.backoff = {100ms, 250ms};
  p.queue_cap = queue_cap;
  return p;
}

// How far the clock moves to the wait the worker is in now.
SteadyTime::duration next_wait(FakeSteadyTime& time) {
  time.await_waiters(1);
  const auto before = time.now();
  time.advance_to_next_deadline();
  return time.now() - before;
}

TEST(AsyncAlertOutlet, SendOnlyQueuesWhileAnAttemptIsInProgress) {
  FakeSteadyTime time;
  ScriptedOutlet outlet(policy(), time);
  outlet.hold();
  outlet.send(alert("1"));
  outlet.await_attempts(1);  // the worker is inside deliver(), blocked
  outlet.send(alert("2"));   // a send that waited for delivery would never return
  outlet.send(alert("3"));
  EXPECT_EQ(outlet.stats().delivered.load(), 0u);
  outlet.release();
  outlet.stop(1h);  // drains the queue
  EXPECT_EQ(outlet.jids(), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(outlet.stats().delivered.load(), 3u);
}

TEST(AsyncAlertOutlet, AFullQueueDropsTheAlertAndCountsIt) {
  FakeSteadyTime time;
  ScriptedOutlet outlet(policy(8, 2), time);
  outlet.hold();
  outlet.send(alert("0"));
  outlet.await_attempts(1);  // "0" left the queue
  for (int i = 1; i < 10; ++i) outlet.send(alert(std::to_string(i)));
  EXPECT_EQ(outlet.stats().dropped_queue_full.load(), 7u);
  outlet.release();
  outlet.stop(1h);
  EXPECT_EQ(outlet.jids(), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(outlet.stats().delivered.load(), 3u);
}

TEST(AsyncAlertOutlet, FailedAttemptsAreRetriedAfterTheBackoffUntilDelivered) {
  FakeSteadyTime time;
  ScriptedOutlet outlet(policy(), time, {"HTTP 500", "HTTP 503", "timeout"});
  outlet.send(alert("1"));
  // Capped exponential: 100 ms, 200 ms, then the 250 ms cap.
  const std::vector<SteadyTime::duration> expected = {100ms, 200ms, 250ms};
  for (std::size_t failed = 1; failed <= expected.size(); ++failed) {
    outlet.await_attempts(failed);
    EXPECT_EQ(next_wait(time), expected[failed - 1]) << "after attempt " << failed;
  }
  outlet.await_attempts(4);
  outlet.stop(1h);
  EXPECT_EQ(outlet.stats().attempts.load(), 4u);
  EXPECT_EQ(outlet.stats().retries.load(), 3u);
  EXPECT_EQ(outlet.stats().delivered.load(), 1u);
  EXPECT_EQ(outlet.stats().gave_up.load(), 0u);
}

TEST(AsyncAlertOutlet, GivesUpAfterMaxAttemptsCountedAndGoesOn) {
  FakeSteadyTime time;
  ScriptedOutlet outlet(policy(3), time, {"HTTP 500", "HTTP 500", "HTTP 500"});
  outlet.send(alert("1"));
  outlet.send(alert("2"));
  for (std::size_t attempt = 1; attempt < 3; ++attempt) {
    outlet.await_attempts(attempt);
    (void)next_wait(time);
  }
  outlet.stop(1h);
  EXPECT_EQ(outlet.jids(), (std::vector<std::string>{"1", "1", "1", "2"}));
  EXPECT_EQ(outlet.stats().gave_up.load(), 1u);
  EXPECT_EQ(outlet.stats().retries.load(), 2u);
  EXPECT_EQ(outlet.stats().delivered.load(), 1u);
}

TEST(AsyncAlertOutlet, StopDrainsTheQueueRetriesIncluded) {
  FakeSteadyTime time;
  ScriptedOutlet outlet(policy(), time, {"HTTP 500"});
  outlet.send(alert("1"));
  outlet.send(alert("2"));
  outlet.await_attempts(1);
  time.await_waiters(1);  // "1" waits for its retry
  auto stopped = std::async(std::launch::async, [&] { outlet.stop(10s); });
  time.await_waiters(2);            // stop() waits for the drain, on the same clock
  time.advance_to_next_deadline();  // the retry comes first
  ASSERT_EQ(stopped.wait_for(60s), std::future_status::ready);
  EXPECT_EQ(outlet.jids(), (std::vector<std::string>{"1", "1", "2"}));
  EXPECT_EQ(outlet.stats().delivered.load(), 2u);
  EXPECT_EQ(outlet.stats().gave_up.load(), 0u);
}

TEST(AsyncAlertOutlet, StopDuringABackoffGivesUpAtItsDeadlineWithoutAnotherAttempt) {
  FakeSteadyTime time;
  RetryPolicy p = policy();
  p.backoff = {10s, 10s};
  ScriptedOutlet outlet(p, time, {"HTTP 500"});
  outlet.send(alert("1"));
  outlet.await_attempts(1);
  time.await_waiters(1);  // in its 10 s backoff
  auto stopped = std::async(std::launch::async, [&] { outlet.stop(2s); });
  time.await_waiters(2);
  time.advance(2s);  // the drain deadline, long before the retry
  ASSERT_EQ(stopped.wait_for(60s), std::future_status::ready);
  EXPECT_EQ(outlet.stats().attempts.load(), 1u);
  EXPECT_EQ(outlet.stats().gave_up.load(), 1u);
  EXPECT_EQ(outlet.stats().delivered.load(), 0u);
}

TEST(AsyncAlertOutlet, AtTheDeadlineTheAttemptInProgressIsInterruptedAndTheRestGivenUp) {
  FakeSteadyTime time;
  ScriptedOutlet outlet(policy(), time);
  outlet.hold();
  outlet.send(alert("1"));
  outlet.await_attempts(1);  // hangs until interrupted
  outlet.send(alert("2"));
  outlet.send(alert("3"));
  auto stopped = std::async(std::launch::async, [&] { outlet.stop(5s); });
  time.await_waiters(1);  // stop() waits for the drain
  time.advance(5s);
  ASSERT_EQ(stopped.wait_for(60s), std::future_status::ready);
  EXPECT_EQ(outlet.jids(), (std::vector<std::string>{"1"})) << "no attempt after the deadline";
  EXPECT_EQ(outlet.stats().gave_up.load(), 3u);
  EXPECT_EQ(outlet.stats().delivered.load(), 0u);
}

}  // namespace
}  // namespace salttap::alerting
