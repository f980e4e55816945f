#include "alerting/internal/log_alert_outlet.h"

#include "common/log.h"

namespace salttap::alerting {

void LogAlertOutlet::send(const correlator::Alert& alert) {
  if (alert.jid.empty())
    log::warn("alert {}: {}", to_string(alert.kind), alert.json);
  else
    log::warn("alert {} job {}: {}", to_string(alert.kind), alert.jid, alert.json);
}

}  // namespace salttap::alerting
