#pragma once
// EventQueue: the bounded hand-off between the bus reader thread and the rest
// of the pipeline. The reader never waits on it: when it is full, the newest
// events are dropped and counted, so a slow consumer can never stall the
// master's publisher (docs/salt-event-bus.md §3.5).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "common/steady_time.h"
#include "tap/event.h"

namespace salttap::tap {

struct QueueLimits {
  std::size_t max_events = 200'000;
  std::size_t max_bytes = 512ull << 20;  // wire bytes of queued events
};

struct QueueStats {
  std::uint64_t pushed = 0;
  std::uint64_t dropped = 0;
  std::uint64_t dropped_bytes = 0;
  std::size_t depth = 0;
  std::size_t bytes = 0;
};

class EventQueue {
 public:
  // pop_all() waits on `time` (tests give a fake one).
  explicit EventQueue(const QueueLimits& limits = {}, SteadyTime& time = real_steady_time())
      : limits_(limits), time_(time) {}

  // Moves the events in; never blocks. Returns how many were dropped.
  std::size_t push(std::vector<Event>& batch);
  // Waits up to `timeout` for events, then moves every queued event to `out`.
  // Returns false once the queue is closed and empty.
  bool pop_all(std::vector<Event>& out, std::chrono::milliseconds timeout);
  void close();
  QueueStats stats() const;

 private:
  QueueLimits limits_;
  SteadyTime& time_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Event> events_;
  QueueStats stats_;
  bool closed_ = false;
};

}  // namespace salttap::tap
