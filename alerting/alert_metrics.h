#pragma once
// Prometheus samples of the alerts: raised by kind (the dispatcher's counts)
// and, per outlet, delivered, retried and dropped (README.md, "Metrics").

#include <string>

#include "alerting/alert_dispatcher.h"
#include "alerting/async_alert_outlet.h"
#include "common/metrics.h"

namespace salttap::alerting {

// salttap_alerts_total{kind}; with `stats`, also the outlet's
// salttap_alert_{deliveries,retries,dropped}_total{outlet="<outlet>"}.
void publish_alert_metrics(Metrics& m, const AlertDispatcher& d, const std::string& outlet,
                           const AsyncAlertOutlet* stats);

}  // namespace salttap::alerting
