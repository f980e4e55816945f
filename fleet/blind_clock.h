#pragma once
// The clock silence is measured on: it stops while salttap cannot hear the
// bus. A minion is silent only for time salttap was listening; a stretch in
// which salttap was down, its tap disconnected (the master down) or behind
// (frames waiting in the journal) is blind time and counts for no minion.
//
// total() is the blind time accumulated so far. Each minion keeps the total
// as it was when it was last heard; its silence is then
//   now - last_heard - (total(now) - total_at_heard).

#include "common/clock.h"

namespace salttap::fleet {

class BlindClock {
 public:
  // Starts blind at `since` (the start, or the time the state was saved by
  // the previous run), with `total` accumulated before it.
  BlindClock(Micros total, Micros since) : total_(total), blind_since_(since) {}

  // Whether salttap hears the bus at `now`; call often (every batch).
  void observe(bool hearing, Micros now);
  // Blind time accumulated up to `now`, the current blind stretch included.
  Micros total(Micros now) const;
  bool blind() const { return blind_; }

 private:
  Micros total_;
  Micros blind_since_;
  bool blind_ = true;
};

}  // namespace salttap::fleet
