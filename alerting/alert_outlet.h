#pragma once
// The one promise every alert outlet keeps: send() never blocks the pipeline
// thread. An outlet that talks to the network hands the alert to its own
// worker (async_alert_outlet.h).

#include "correlator/alert.h"

namespace salttap::alerting {

class AlertOutlet {
 public:
  virtual ~AlertOutlet() = default;
  virtual void send(const correlator::Alert& alert) = 0;  // never blocks
};

}  // namespace salttap::alerting
