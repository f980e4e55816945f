#pragma once
// Prometheus samples of the alerts: raised by kind (the dispatcher's counts)
// and, per outlet, delivered, retried and dropped (docs/operations.md, "Metrics").

#include <initializer_list>
#include <span>

#include "alerting/alert_dispatcher.h"
#include "alerting/async_alert_outlet.h"
#include "alerting/dedupe_alert_outlet.h"
#include "common/metrics.h"

namespace salttap::alerting {

// salttap_alerting_alerts_total{kind}; for the outlets that are not null,
// salttap_alerting_{deliveries,delivery_retries,dropped_alerts}_total with
// outlet="<its name>", summed over the outlets of one name (an outlet a
// config reload replaced keeps counting in its name's totals).
// salttap_alerting_dedupe_total{result} summed over `dedupes` (0 without alerts.dedupe).
void publish_alert_metrics(Metrics& m, const AlertDispatcher& d, std::span<const AsyncAlertOutlet* const> outlets,
                           std::span<const DedupeAlertOutlet* const> dedupes = {});
inline void publish_alert_metrics(Metrics& m, const AlertDispatcher& d,
                                  std::initializer_list<const AsyncAlertOutlet*> outlets,
                                  std::initializer_list<const DedupeAlertOutlet*> dedupes = {}) {
  publish_alert_metrics(m, d, std::span<const AsyncAlertOutlet* const>(outlets.begin(), outlets.size()),
                        std::span<const DedupeAlertOutlet* const>(dedupes.begin(), dedupes.size()));
}

}  // namespace salttap::alerting
