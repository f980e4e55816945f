#include "fleet/blind_clock.h"

#include <algorithm>

namespace salttap::fleet {

void BlindClock::observe(bool hearing, Micros now) {
  if (hearing == !blind_) return;
  if (hearing) {
    total_ += std::max<Micros>(0, now - blind_since_);
    blind_ = false;
  } else {
    blind_since_ = now;
    blind_ = true;
  }
}

Micros BlindClock::total(Micros now) const {
  return blind_ ? total_ + std::max<Micros>(0, now - blind_since_) : total_;
}

}  // namespace salttap::fleet
