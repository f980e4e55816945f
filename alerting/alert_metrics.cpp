#include "alerting/alert_metrics.h"

namespace salttap::alerting {

void publish_alert_metrics(Metrics& m, const AlertDispatcher& d,
                           std::initializer_list<const AsyncAlertOutlet*> outlets) {
  using enum MetricId;
  using correlator::AlertKind;
  for (AlertKind k : {AlertKind::failed, AlertKind::missing, AlertKind::risky, AlertKind::spool_full})
    m.counter(alerting_alerts, {to_string(k)}, d.count(k));
  for (const AsyncAlertOutlet* o : outlets) {
    if (!o) continue;
    const OutletStats& s = o->stats();
    m.counter(alerting_deliveries, {o->name()}, s.delivered);
    m.counter(alerting_delivery_retries, {o->name()}, s.retries);
    m.counter(alerting_dropped_alerts, {o->name(), "queue_full"}, s.dropped_queue_full);
    m.counter(alerting_dropped_alerts, {o->name(), "gave_up"}, s.gave_up);
  }
}

}  // namespace salttap::alerting
