// The process's own threads: their names, and how the real steady clock waits.

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "common/steady_time.h"
#include "common/thread_name.h"

namespace salttap {
namespace {

std::string comm_of(long tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

std::string name_seen_by_the_kernel(std::string_view name) {
  std::string seen;
  std::thread t([&] {
    name_this_thread(name);
    seen = comm_of(syscall(SYS_gettid));
  });
  t.join();
  return seen;
}

TEST(ThreadName, TheKernelShowsTheName) { EXPECT_EQ(name_seen_by_the_kernel("ship-worker-1"), "ship-worker-1"); }

TEST(ThreadName, ALongNameIsCutToFifteenCharacters) {
  EXPECT_EQ(name_seen_by_the_kernel("a-name-longer-than-fifteen"), "a-name-longer-t");
}

TEST(RealSteadyTime, APastDeadlineReturnsTheConditionWithoutWaiting) {
  std::mutex mutex;
  std::condition_variable cv;
  std::unique_lock lock(mutex);
  SteadyTime& time = real_steady_time();
  const auto past = time.now() - std::chrono::seconds(1);
  EXPECT_FALSE(time.wait_until(lock, cv, past, [] { return false; }));
  EXPECT_TRUE(time.wait_until(lock, cv, past, [] { return true; }));
  EXPECT_TRUE(lock.owns_lock());
}

TEST(RealSteadyTime, AWaitEndsWhenTheConditionIsNotified) {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::thread notifier([&] {
    std::lock_guard lock(mutex);
    done = true;
    cv.notify_all();
  });
  std::unique_lock lock(mutex);
  EXPECT_TRUE(real_steady_time().wait_for(lock, cv, std::chrono::hours(1), [&] { return done; }));
  lock.unlock();
  notifier.join();
}

TEST(RealSteadyTime, AWaitWithNobodyToNotifyEndsAtItsDeadline) {
  std::mutex mutex;
  std::condition_variable cv;
  std::unique_lock lock(mutex);
  SteadyTime& time = real_steady_time();
  const auto deadline = time.now() + std::chrono::milliseconds(20);
  EXPECT_FALSE(time.wait_until(lock, cv, deadline, [] { return false; }));
  EXPECT_GE(time.now(), deadline);
}

}  // namespace
}  // namespace salttap
