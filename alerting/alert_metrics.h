#pragma once
// Prometheus samples of the alerts: raised by kind (the dispatcher's counts)
// and, per outlet, delivered, retried and dropped (docs/operations.md, "Metrics").

#include <initializer_list>

#include "alerting/alert_dispatcher.h"
#include "alerting/async_alert_outlet.h"
#include "common/metrics.h"

namespace salttap::alerting {

// salttap_alerting_alerts_total{kind}; for each outlet that is not null,
// salttap_alerting_{deliveries,delivery_retries,dropped_alerts}_total with
// outlet="<its name>".
void publish_alert_metrics(Metrics& m, const AlertDispatcher& d,
                           std::initializer_list<const AsyncAlertOutlet*> outlets);

}  // namespace salttap::alerting
