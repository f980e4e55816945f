#include "tap/event_queue.h"

namespace salttap::tap {

std::size_t EventQueue::push(std::vector<Event>& batch) {
  std::size_t dropped = 0;
  {
    std::lock_guard lock(mutex_);
    for (Event& e : batch) {
      if (events_.size() >= limits_.max_events || stats_.bytes + e.wire_bytes() > limits_.max_bytes) {
        ++dropped;
        stats_.dropped_bytes += e.wire_bytes();
        continue;
      }
      stats_.bytes += e.wire_bytes();
      events_.push_back(std::move(e));
    }
    stats_.pushed += batch.size() - dropped;
    stats_.dropped += dropped;
    stats_.depth = events_.size();
  }
  batch.clear();
  ready_.notify_one();
  return dropped;
}

bool EventQueue::pop_all(std::vector<Event>& out, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  time_.wait_for(lock, ready_, timeout, [&] { return !events_.empty() || closed_; });
  for (Event& e : events_) out.push_back(std::move(e));
  events_.clear();
  stats_.bytes = 0;
  stats_.depth = 0;
  return !(closed_ && out.empty());
}

void EventQueue::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
}

QueueStats EventQueue::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace salttap::tap
