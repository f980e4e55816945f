#include "alerting/alert_metrics.h"

namespace salttap::alerting {

void publish_alert_metrics(Metrics& m, const AlertDispatcher& d, const std::string& outlet, const AsyncAlertOutlet* o) {
  using correlator::AlertKind;
  for (AlertKind k : {AlertKind::failed, AlertKind::missing, AlertKind::risky, AlertKind::spool_full})
    m.counter("salttap_alerts_total{kind=\"" + std::string(to_string(k)) + "\"}", d.count(k), "Alerts raised, by kind");
  if (!o) return;
  const auto& s = o->stats();
  const std::string l = "{outlet=\"" + outlet + "\"}";
  m.counter("salttap_alert_deliveries_total" + l, s.delivered, "Alerts delivered, by outlet");
  m.counter("salttap_alert_retries_total" + l, s.retries, "Delivery retries, by outlet");
  m.counter("salttap_alert_dropped_total" + l, s.dropped_queue_full + s.gave_up,
            "Alerts not delivered (queue full or gave up), by outlet");
}

}  // namespace salttap::alerting
