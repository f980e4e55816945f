#pragma once
// EventQueue: the bounded hand-off between the bus reader thread and the rest
// of the pipeline. The reader never waits on it: when it is full, the newest
// events are dropped and counted, so a slow consumer can never stall the
// master's publisher (docs/salt-event-bus.md §3.5).
//
// With a TapJournal attached (`run`), a full queue costs disk instead of
// events: the reader (tap/internal/spill_gate.h) sends the raw frames that
// do not fit to the journal, and every later frame too until the journal
// has drained, and pop_all() hands out, in bus order, what was queued before
// the spill, then the journal's records decoded, then the queue again
// (docs/tap-journal.md).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "common/steady_time.h"
#include "tap/decode_limits.h"
#include "tap/event.h"
#include "tap/tap_journal.h"

namespace salttap::tap {

class EventDecoder;

// The defaults hold about a second of the pipeline's pace in memory: a
// burst beyond it goes to the journal, where it costs disk, not RSS (a
// queued event takes a few times its wire size in memory once decoded).
// Without a journal (`watch`) a burst beyond it is dropped: `watch` keeps the
// larger LegacyQueueLimits.
struct QueueLimits {
  std::size_t max_events = 50'000;
  std::size_t max_bytes = 16ull << 20;  // wire bytes of queued events
};
// What the queue held before the journal: 200k events / 512 MiB.
inline constexpr QueueLimits kLegacyQueueLimits{200'000, 512ull << 20};

struct QueueStats {
  std::uint64_t pushed = 0;
  std::uint64_t dropped = 0;
  std::uint64_t dropped_bytes = 0;
  std::size_t depth = 0;
  std::size_t bytes = 0;
  std::uint64_t journal_events = 0;         // decoded from the journal
  std::uint64_t journal_decode_errors = 0;  // journaled frames that did not decode
  std::optional<JournalStats> journal;      // when one is attached
};

class EventQueue {
 public:
  // pop_all() waits on `time` (tests give a fake one).
  explicit EventQueue(const QueueLimits& limits = {}, SteadyTime& time = real_steady_time());
  ~EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  // Before the reader starts. Frames drained from it are decoded with `limits`.
  void attach_journal(TapJournal& journal, const DecodeLimits& limits = {});
  TapJournal* journal() const { return journal_; }

  // Moves the events in; never blocks. Returns how many were dropped.
  std::size_t push(std::vector<Event>& batch);
  // What push() would take now (the reader's only, so it only grows until its next push).
  struct Room {
    std::size_t events = 0;
    std::size_t bytes = 0;
  };
  Room room() const;
  // The journal has records: wakes a waiting pop_all().
  void wake();

  // Waits up to `timeout` for events, then moves every queued event to
  // `out`; when nothing was queued and the journal has records, up to
  // `journal_batch` of them, decoded. Returns false once the queue is
  // closed and empty.
  bool pop_all(std::vector<Event>& out, std::chrono::milliseconds timeout);
  void close();
  QueueStats stats() const;

  static constexpr std::size_t kJournalBatchEvents = 4096;
  static constexpr std::size_t kJournalBatchBytes = std::size_t{8} << 20;

 private:
  void drain_journal(std::vector<Event>& out);

  QueueLimits limits_;
  SteadyTime& time_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Event> events_;
  QueueStats stats_;
  bool closed_ = false;
  TapJournal* journal_ = nullptr;
  std::unique_ptr<EventDecoder> decoder_;  // the consumer's, for journaled frames
};

}  // namespace salttap::tap
