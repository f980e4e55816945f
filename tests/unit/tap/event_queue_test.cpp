// The bounded hand-off between the bus reader and the pipeline, on fake time.

#include "tap/event_queue.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/support/events.h"
#include "tests/support/fake_steady_time.h"

namespace salttap::tap {
namespace {

using namespace std::chrono_literals;
using salttap::testing::ev;
using salttap::testing::FakeSteadyTime;

std::vector<Event> events(std::initializer_list<const char*> tags) {
  std::vector<Event> out;
  for (const char* tag : tags) out.push_back(ev(tag, "{}"));
  return out;
}

std::vector<std::string> tags_of(const std::vector<Event>& batch) {
  std::vector<std::string> out;
  for (const Event& e : batch) out.emplace_back(e.tag());
  return out;
}

TEST(EventQueue, PopWaitsItsWholeTimeoutThenReturnsNothing) {
  FakeSteadyTime time;
  EventQueue queue({}, time);
  std::vector<Event> out;
  bool open = false;
  std::thread popper([&] { open = queue.pop_all(out, 200ms); });
  time.await_waiters(1);
  time.advance(199ms);
  EXPECT_EQ(time.waiters(), 1u) << "still waiting 1 ms before its timeout";
  time.advance(1ms);
  popper.join();
  EXPECT_TRUE(open);
  EXPECT_TRUE(out.empty());
}

TEST(EventQueue, APushWakesAWaitingPopWithoutTimeMoving) {
  FakeSteadyTime time;
  EventQueue queue({}, time);
  const auto start = time.now();
  std::vector<Event> out;
  std::thread popper([&] { queue.pop_all(out, 1h); });
  time.await_waiters(1);
  auto batch = events({"a", "b"});
  EXPECT_EQ(queue.push(batch), 0u);
  popper.join();
  EXPECT_EQ(tags_of(out), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(time.now(), start);
}

TEST(EventQueue, AFullQueueDropsTheNewestAndCountsThem) {
  EventQueue queue({.max_events = 2});
  auto batch = events({"a", "b", "c"});
  EXPECT_EQ(queue.push(batch), 1u);
  EXPECT_TRUE(batch.empty());
  const QueueStats s = queue.stats();
  EXPECT_EQ(s.pushed, 2u);
  EXPECT_EQ(s.dropped, 1u);
  EXPECT_EQ(s.depth, 2u);
  std::vector<Event> out;
  EXPECT_TRUE(queue.pop_all(out, 0ms));
  EXPECT_EQ(tags_of(out), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(queue.stats().depth, 0u);
}

TEST(EventQueue, AClosedQueueIsDrainedThenReportsTheEnd) {
  FakeSteadyTime time;
  EventQueue queue({}, time);
  auto batch = events({"last"});
  queue.push(batch);
  queue.close();
  std::vector<Event> out;
  EXPECT_TRUE(queue.pop_all(out, 1h));
  EXPECT_EQ(tags_of(out), (std::vector<std::string>{"last"}));
  out.clear();
  EXPECT_FALSE(queue.pop_all(out, 1h)) << "closed and empty: no wait";
}

}  // namespace
}  // namespace salttap::tap
