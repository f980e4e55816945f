#include "tap/internal/spill_gate.h"

namespace salttap::tap {

void SpillGate::begin() {
  spilled_ = false;
  dropped_ = 0;
  if (!journal_) return;
  // The queue only grows by our pushes, so this room is ours until end().
  room_ = queue_.room();
  spilling_ = journal_->active();
}

bool SpillGate::divert(std::string_view raw, JournalRecordKind kind, std::vector<Event>& decoded) {
  if (!journal_) return false;
  if (!spilling_) {
    if (room_.events > 0 && raw.size() <= room_.bytes) {
      --room_.events;
      room_.bytes -= raw.size();  // an event's wire size is its frame's
      return false;
    }
    spilling_ = true;
    if (!decoded.empty()) dropped_ += queue_.push(decoded);  // fits: room_ was kept for it
  }
  journal_->append(kind, raw);
  spilled_ = true;
  return true;
}

std::size_t SpillGate::end(std::vector<Event>& decoded) {
  if (!decoded.empty()) dropped_ += queue_.push(decoded);
  if (spilled_) {
    journal_->flush();
    queue_.wake();
  }
  return dropped_;
}

}  // namespace salttap::tap
