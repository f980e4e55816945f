// The one backoff policy and the steady-time seam (real and fake).
#include "common/backoff.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "tests/support/fake_steady_time.h"

namespace salttap {
namespace {

using std::chrono::milliseconds;

TEST(FullJitterDelay, IsUniformUpToTheCappedExponential) {
  const BackoffPolicy p{milliseconds(100), milliseconds(1000)};
  EXPECT_EQ(full_jitter_delay(p, 0, 0.0), milliseconds(0));
  EXPECT_EQ(full_jitter_delay(p, 0, 0.999999), milliseconds(100));
  EXPECT_EQ(full_jitter_delay(p, 1, 0.999999), milliseconds(200));
  EXPECT_EQ(full_jitter_delay(p, 3, 0.999999), milliseconds(800));
  EXPECT_EQ(full_jitter_delay(p, 4, 0.999999), milliseconds(1000));  // capped
  EXPECT_EQ(full_jitter_delay(p, 4, 0.5), milliseconds(500));
}

TEST(FullJitterDelay, SurvivesHugeAttemptsAndBadRandoms) {
  const BackoffPolicy p{milliseconds(500), milliseconds(60'000)};
  EXPECT_EQ(full_jitter_delay(p, 1000, 0.999999), milliseconds(60'000));
  EXPECT_EQ(full_jitter_delay(p, 63, 0.999999), milliseconds(60'000));
  EXPECT_EQ(full_jitter_delay(p, 2, std::nan("")), milliseconds(0));
  EXPECT_EQ(full_jitter_delay(p, 2, -1.0), milliseconds(0));
  EXPECT_EQ(full_jitter_delay(p, 2, 7.0), milliseconds(2000));
  EXPECT_EQ(full_jitter_delay({milliseconds(-5), milliseconds(-1)}, 3, 0.9), milliseconds(0));
  EXPECT_EQ(full_jitter_delay(p, 64, 0.5), milliseconds(30'000));
  EXPECT_EQ(full_jitter_delay(p, 4'000'000'000u, 0.5), milliseconds(30'000));
  EXPECT_EQ(full_jitter_delay({milliseconds(0), milliseconds(60'000)}, 10, 0.9), milliseconds(0));
  // initial * 2^attempt would overflow: the cap is max
  EXPECT_EQ(full_jitter_delay({milliseconds(std::numeric_limits<long long>::max()), milliseconds(5000)}, 3, 0.5),
            milliseconds(2500));
}

TEST(Backoff, GrowsPerFailureAndResets) {
  Backoff b({milliseconds(10), milliseconds(1000)}, [] { return 0.999999; });
  EXPECT_EQ(b.next(), milliseconds(10));
  EXPECT_EQ(b.next(), milliseconds(20));
  EXPECT_EQ(b.next(), milliseconds(40));
  EXPECT_EQ(b.failures(), 3u);
  b.reset();
  EXPECT_EQ(b.next(), milliseconds(10));
}

TEST(Backoff, SystemRandomStaysInRange) {
  Backoff b({milliseconds(1), milliseconds(8)});
  for (int i = 0; i < 1000; ++i) {
    const auto d = b.next();
    EXPECT_GE(d.count(), 0);
    EXPECT_LE(d.count(), 8);
  }
}

TEST(SteadyTime, RealWaitReturnsAsSoonAsDone) {
  std::mutex m;
  std::condition_variable cv;
  std::unique_lock lock(m);
  EXPECT_TRUE(real_steady_time().wait_for(lock, cv, std::chrono::hours(1), [] { return true; }));
}

TEST(FakeSteadyTime, AWaiterWakesOnlyWhenTimeReachesItsDeadline) {
  testing::FakeSteadyTime time;
  const auto start = time.now();
  std::mutex m;
  std::condition_variable cv;
  bool timed_out = false;
  std::thread waiter([&] {
    std::unique_lock lock(m);
    timed_out = !time.wait_for(lock, cv, std::chrono::seconds(30), [] { return false; });
  });
  time.await_waiters(1);
  time.advance(std::chrono::seconds(29));
  EXPECT_EQ(time.waiters(), 1u);  // still asleep: 29 of 30 s
  time.advance(std::chrono::seconds(1));
  waiter.join();
  EXPECT_TRUE(timed_out);
  EXPECT_EQ(time.now() - start, std::chrono::seconds(30));
  EXPECT_EQ(time.waiters(), 0u);
}

TEST(FakeSteadyTime, AWaiterWakesWhenDoneWithoutTimeMoving) {
  testing::FakeSteadyTime time;
  std::mutex m;
  std::condition_variable cv;
  bool flag = false, woke_done = false;
  std::thread waiter([&] {
    std::unique_lock lock(m);
    woke_done = time.wait_for(lock, cv, std::chrono::hours(1), [&] { return flag; });
  });
  time.await_waiters(1);
  {
    std::lock_guard lock(m);
    flag = true;
  }
  cv.notify_all();
  waiter.join();
  EXPECT_TRUE(woke_done);
}

TEST(FakeSteadyTime, AdvanceToNextDeadlineWakesTheEarliest) {
  testing::FakeSteadyTime time;
  const auto start = time.now();
  std::thread sleeper([&] { time.sleep_for(std::chrono::minutes(5)); });
  time.await_waiters(1);
  time.advance_to_next_deadline();
  sleeper.join();
  EXPECT_EQ(time.now() - start, std::chrono::minutes(5));
}

TEST(FakeSteadyTime, AWaiterWhoseDeadlineHasComeNoLongerCounts) {
  testing::FakeSteadyTime time;
  const auto start = time.now();
  std::thread sleeper([&] {
    time.sleep_for(std::chrono::minutes(5));
    time.sleep_for(std::chrono::minutes(1));
  });
  time.await_waiters(1);
  time.advance_to_next_deadline();
  time.await_waiters(1);  // the second sleep, not the first one on its way out
  time.advance_to_next_deadline();
  sleeper.join();
  EXPECT_EQ(time.now() - start, std::chrono::minutes(6));
}

TEST(FakeSteadyTime, AdvanceUntilStopsAtTheAwaitedState) {
  testing::FakeSteadyTime time;
  const auto start = time.now();
  std::atomic<int> ticks{0};
  std::thread ticker([&] {
    for (int i = 0; i < 10; ++i) {
      time.sleep_for(std::chrono::seconds(1));
      ++ticks;
    }
  });
  time.advance_until([&] { return ticks >= 3; });
  EXPECT_EQ(time.now() - start, std::chrono::seconds(3)) << "time never runs past the awaited state";
  time.advance_until([&] { return ticks == 10; });
  ticker.join();
  EXPECT_EQ(time.now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace salttap
