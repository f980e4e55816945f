#include "tap/event_queue.h"

#include "common/log.h"
#include "tap/internal/event_decoder.h"

namespace salttap::tap {

namespace {
constexpr std::uint64_t kMaxLoggedDecodeErrors = 20;
}

EventQueue::EventQueue(const QueueLimits& limits, SteadyTime& time) : limits_(limits), time_(time) {}

EventQueue::~EventQueue() = default;

void EventQueue::attach_journal(TapJournal& journal, const DecodeLimits& limits) {
  journal_ = &journal;
  decoder_ = std::make_unique<EventDecoder>(limits);
}

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

EventQueue::Room EventQueue::room() const {
  std::lock_guard lock(mutex_);
  Room r;
  if (events_.size() < limits_.max_events) r.events = limits_.max_events - events_.size();
  if (stats_.bytes < limits_.max_bytes) r.bytes = limits_.max_bytes - stats_.bytes;
  return r;
}

void EventQueue::wake() {
  { std::lock_guard lock(mutex_); }  // a pop_all() between its check and its wait sees the records
  ready_.notify_one();
}

bool EventQueue::pop_all(std::vector<Event>& out, std::chrono::milliseconds timeout) {
  bool journal_turn = false;
  {
    std::unique_lock lock(mutex_);
    time_.wait_for(lock, ready_, timeout,
                   [&] { return !events_.empty() || closed_ || (journal_ && journal_->readable()); });
    // Asked before the queue is taken: the reader queues nothing once the
    // journal is active, so what is queued now is older than every record.
    journal_turn = journal_ && journal_->active();
    for (Event& e : events_) out.push_back(std::move(e));
    events_.clear();
    stats_.bytes = 0;
    stats_.depth = 0;
    if (!out.empty()) return true;
    if (!journal_turn) return !closed_;
  }
  drain_journal(out);
  return true;
}

void EventQueue::drain_journal(std::vector<Event>& out) {
  std::uint64_t events = 0;
  std::uint64_t errors = 0;
  const std::size_t n =
      journal_->drain(kJournalBatchEvents, kJournalBatchBytes, [&](JournalRecordKind kind, std::string_view payload) {
        std::optional<Event> e =
            kind == JournalRecordKind::body ? decoder_->decode_body(payload) : decoder_->decode_frame(payload);
        if (e) {
          out.push_back(std::move(*e));
          ++events;
        } else if (stats_.journal_decode_errors + errors++ < kMaxLoggedDecodeErrors) {
          log::warn("tap journal: skipped an undecodable frame: {}", decoder_->last_error());
        }
      });
  // Nothing left and nothing on its way: the reader queues again.
  if (n == 0) journal_->finish_if_drained();
  std::lock_guard lock(mutex_);
  stats_.journal_events += events;
  stats_.journal_decode_errors += errors;
}

void EventQueue::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
}

QueueStats EventQueue::stats() const {
  QueueStats s;
  {
    std::lock_guard lock(mutex_);
    s = stats_;
  }
  if (journal_) s.journal = journal_->stats();
  return s;
}

}  // namespace salttap::tap
