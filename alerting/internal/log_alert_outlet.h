#pragma once
// Alerts to the log: one WARN line per alert, its JSON payload included.

#include "alerting/alert_outlet.h"

namespace salttap::alerting {

class LogAlertOutlet final : public AlertOutlet {
 public:
  void send(const correlator::Alert& alert) override;
};

}  // namespace salttap::alerting
