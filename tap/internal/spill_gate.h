#pragma once
// SpillGate: the reader thread's side of the journal (docs/tap-journal.md).
// Per read of the socket: begin(), then divert() for each whole frame before
// it is decoded, then end(). A frame goes to the journal, raw, when the
// journal is active (records wait: bus order) or the queue has no room for
// it; what the reader decoded before the first spilled frame is pushed first,
// so it stays ahead of the journal. Never waits on the consumer: a buffered
// append, and one write per read.
//
// Without a journal it does nothing: every frame is decoded, and the queue
// drops what does not fit, as it always did.

#include <cstdint>
#include <string_view>
#include <vector>

#include "tap/event.h"
#include "tap/event_queue.h"
#include "tap/tap_journal.h"

namespace salttap::tap {

class SpillGate {
 public:
  explicit SpillGate(EventQueue& queue) : queue_(queue), journal_(queue.journal()) {}

  void begin();
  // True: the frame went to the journal (or was refused by it, counted
  // there); the caller must not decode it. `decoded` is the reader's batch
  // of this read, pushed before the first spilled frame.
  bool divert(std::string_view raw, JournalRecordKind kind, std::vector<Event>& decoded);
  // Pushes what is left of `decoded`; flushes the journal and wakes the
  // consumer when frames went there. Returns the queue's drops.
  std::size_t end(std::vector<Event>& decoded);

 private:
  EventQueue& queue_;
  TapJournal* journal_;
  EventQueue::Room room_;
  bool spilling_ = false;
  bool spilled_ = false;
  std::size_t dropped_ = 0;
};

}  // namespace salttap::tap
