#pragma once
// Two spools behind one RecordSource, so that documents from the live bus
// never queue behind documents read from the job cache (a reconcile or
// backfill of thousands of jobs). take() hands out the live lane's records
// whenever it has any and the backfill lane's only when the live lane is
// empty; a taker waiting on both wakes as soon as either gets records.
//
// Each lane is a whole Spool (its own directory, segments, ledger and lock),
// so every promise of docs/spool.md (what "spooled" means, acknowledgement,
// recovery after a crash) holds for each lane unchanged. Only the ids are
// this class's: a backfill record's id carries kBackfillLaneBit, so ack()
// routes every id back to the lane it came from.
//
// Ordering: each lane stays oldest first; across lanes a live document may
// overtake a cache document. Documents from the cache carry external
// versions below every live one (docs/backfill.md), so the engine keeps the
// live verdict whichever arrives first.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "common/steady_time.h"
#include "indexer/record_source.h"
#include "indexer/spool.h"

namespace salttap::indexer {

enum class Lane : std::uint8_t { live = 0, backfill = 1 };
inline constexpr std::size_t kLanes = 2;
std::string_view to_string(Lane lane);  // "live", "backfill": in logs, alerts and docs

// Spool ids stay below 2^62 (docs/spool.md), so the top bit is free.
inline constexpr std::uint64_t kBackfillLaneBit = 1ull << 63;

// The backfill lane's spool beside `live`: <live.dir>/backfill (the live
// spool ignores it: only seg-* files are its own), the same fsync policy, a
// quarter of live.max_bytes.
SpoolConfig backfill_lane_config(const SpoolConfig& live);

class SpoolLanes final : public RecordSource {
 public:
  // Both spools and `time` must outlive this object; it registers itself as
  // each spool's data listener (Spool::set_data_listener).
  SpoolLanes(Spool& live, Spool& backfill, SteadyTime& time = real_steady_time());
  ~SpoolLanes() override;
  SpoolLanes(const SpoolLanes&) = delete;
  SpoolLanes& operator=(const SpoolLanes&) = delete;

  std::vector<SpoolRecord> take(std::size_t max_records, std::size_t max_bytes,
                                std::chrono::milliseconds wait) override;
  void ack(std::span<const std::uint64_t> ids) override;
  void wake_takers() override;
  std::filesystem::path dead_letter_dir() const override;  // the live lane's

  static Lane lane_of(std::uint64_t id) { return (id & kBackfillLaneBit) != 0 ? Lane::backfill : Lane::live; }

 private:
  void signal();

  Spool& live_;
  Spool& backfill_;
  SteadyTime& time_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t signals_ = 0;    // bumped when either lane gets records or closes
  std::uint64_t wakeups_ = 0;    // wake_takers() calls
  std::uint64_t delivered_ = 0;  // wakeups_ as a take() last returned: a later wake is one no take has seen
};

}  // namespace salttap::indexer
