#include "indexer/spool_lanes.h"

#include <algorithm>
#include <utility>

namespace salttap::indexer {

std::string_view to_string(Lane lane) { return lane == Lane::backfill ? "backfill" : "live"; }

SpoolConfig backfill_lane_config(const SpoolConfig& live) {
  SpoolConfig c = live;
  c.dir = live.dir / "backfill";
  c.max_bytes = std::max<std::uint64_t>(live.max_bytes / 4, 1);
  c.segment_bytes = std::min(live.segment_bytes, c.max_bytes);
  return c;
}

SpoolLanes::SpoolLanes(Spool& live, Spool& backfill, SteadyTime& time) : live_(live), backfill_(backfill), time_(time) {
  live_.set_data_listener([this] { signal(); });
  backfill_.set_data_listener([this] { signal(); });
}

SpoolLanes::~SpoolLanes() {
  live_.set_data_listener({});
  backfill_.set_data_listener({});
}

// Runs under a spool's lock: takes only this object's own.
void SpoolLanes::signal() {
  {
    std::lock_guard lock(mutex_);
    ++signals_;
  }
  cv_.notify_all();
}

std::vector<SpoolRecord> SpoolLanes::take(std::size_t max_records, std::size_t max_bytes,
                                          std::chrono::milliseconds wait) {
  if (max_records == 0) return {};
  const auto deadline = time_.now() + std::max(wait, std::chrono::milliseconds(0));
  std::uint64_t wakeups = 0;
  {
    std::lock_guard lock(mutex_);
    wakeups = delivered_;  // a wake since the last take returned counts for this one
  }
  // Whatever this take returns, the wakes so far have been seen.
  auto seen_wakes = [this](std::vector<SpoolRecord> records) {
    std::lock_guard lock(mutex_);
    delivered_ = wakeups_;
    return records;
  };
  for (;;) {
    std::uint64_t seen = 0;
    {
      std::lock_guard lock(mutex_);
      seen = signals_;  // read before looking, so records appended meanwhile wake the wait below
    }
    // Neither take waits: the wait is this object's, on both lanes at once.
    auto records = live_.take(max_records, max_bytes, std::chrono::milliseconds(0));
    if (!records.empty()) return seen_wakes(std::move(records));
    records = backfill_.take(max_records, max_bytes, std::chrono::milliseconds(0));
    if (!records.empty()) {
      for (auto& r : records) r.id |= kBackfillLaneBit;
      return seen_wakes(std::move(records));
    }
    std::unique_lock lock(mutex_);
    if (wakeups_ != wakeups) {
      delivered_ = wakeups_;
      return {};
    }
    if (!time_.wait_until(lock, cv_, deadline, [&] { return signals_ != seen || wakeups_ != wakeups; })) return {};
    // Records came (or a spool closed, or wake_takers()): look again; a
    // wake_takers() returns after that one look.
    if (wakeups_ != wakeups) {
      lock.unlock();
      auto last = live_.take(max_records, max_bytes, std::chrono::milliseconds(0));
      if (last.empty()) {
        last = backfill_.take(max_records, max_bytes, std::chrono::milliseconds(0));
        for (auto& r : last) r.id |= kBackfillLaneBit;
      }
      return seen_wakes(std::move(last));
    }
  }
}

void SpoolLanes::ack(std::span<const std::uint64_t> ids) {
  std::vector<std::uint64_t> live, backfill;
  for (const std::uint64_t id : ids) {
    if (lane_of(id) == Lane::backfill)
      backfill.push_back(id & ~kBackfillLaneBit);
    else
      live.push_back(id);
  }
  if (!live.empty()) live_.ack(live);
  if (!backfill.empty()) backfill_.ack(backfill);
}

void SpoolLanes::wake_takers() {
  {
    std::lock_guard lock(mutex_);
    ++wakeups_;
  }
  cv_.notify_all();
}

std::filesystem::path SpoolLanes::dead_letter_dir() const { return live_.dead_letter_dir(); }

}  // namespace salttap::indexer
