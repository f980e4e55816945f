#pragma once
// An in-memory RecordSource for shipper tests: records handed out in order,
// acks recorded (acking a record twice fails the test). take() waits on the
// SteadyTime it is given, the one the shipper under test runs on, so a fake
// clock drives both; wait_acked() and wait_handed_out() wait for a state,
// their real-time limit only guards against a broken test hanging the suite.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>

#include "common/steady_time.h"
#include "indexer/record_source.h"

namespace salttap::testing {

class MemoryRecordSource final : public indexer::RecordSource {
 public:
  explicit MemoryRecordSource(std::filesystem::path dead_dir = {}, SteadyTime& time = real_steady_time())
      : dead_dir_(std::move(dead_dir)), time_(time) {}

  void add(std::string payload) {
    std::lock_guard lock(mutex_);
    records_.push_back({next_id_++, indexer::DocClass::event, std::move(payload)});
    cv_.notify_all();
  }
  // At most max_records, and no more than max_bytes unless one record alone is larger.
  std::vector<indexer::SpoolRecord> take(std::size_t max_records, std::size_t max_bytes,
                                         std::chrono::milliseconds wait) override {
    std::unique_lock lock(mutex_);
    // As the spool: a wake no take has seen yet counts for this one.
    time_.wait_for(lock, cv_, wait, [&] { return handed_out_ < records_.size() || wakeups_ != delivered_; });
    delivered_ = wakeups_;
    std::vector<indexer::SpoolRecord> out;
    std::size_t bytes = 0;
    while (handed_out_ < records_.size() && out.size() < max_records &&
           (out.empty() || bytes + records_[handed_out_].payload.size() <= max_bytes)) {
      bytes += records_[handed_out_].payload.size();
      out.push_back(records_[handed_out_++]);
    }
    if (!out.empty()) cv_.notify_all();
    return out;
  }
  void ack(std::span<const std::uint64_t> ids) override {
    std::lock_guard lock(mutex_);
    for (auto id : ids) EXPECT_TRUE(acked_.insert(id).second) << "acked twice: " << id;
    cv_.notify_all();
  }
  void wake_takers() override {
    std::lock_guard lock(mutex_);
    ++wakeups_;
    cv_.notify_all();
  }
  std::filesystem::path dead_letter_dir() const override { return dead_dir_; }

  bool wait_acked(std::size_t n, std::chrono::milliseconds guard = std::chrono::seconds(60)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, guard, [&] { return acked_.size() >= n; });
  }
  bool wait_handed_out(std::size_t n, std::chrono::milliseconds guard = std::chrono::seconds(60)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, guard, [&] { return handed_out_ >= n; });
  }
  // Blocks until wake_takers() was called `n` times (a shipper's stop() calls
  // it once it has set its stop flag).
  bool wait_woken(std::uint64_t n, std::chrono::milliseconds guard = std::chrono::seconds(60)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, guard, [&] { return wakeups_ >= n; });
  }
  std::size_t acked() const {
    std::lock_guard lock(mutex_);
    return acked_.size();
  }
  std::size_t handed_out() const {
    std::lock_guard lock(mutex_);
    return handed_out_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<indexer::SpoolRecord> records_;
  std::uint64_t wakeups_ = 0;
  std::uint64_t delivered_ = 0;
  std::size_t handed_out_ = 0;
  std::uint64_t next_id_ = 1;
  std::set<std::uint64_t> acked_;
  std::filesystem::path dead_dir_;
  SteadyTime& time_;
};

}  // namespace salttap::testing
