#include "alerting/internal/alert_metrics.h"

#include <map>
#include <string>

namespace salttap::alerting {

void publish_alert_metrics(Metrics& m, const AlertDispatcher& d, std::span<const AsyncAlertOutlet* const> outlets,
                           std::span<const DedupeAlertOutlet* const> dedupes) {
  using enum MetricId;
  using correlator::AlertKind;
  for (std::size_t k = 0; k < correlator::kAlertKinds; ++k)
    m.counter(alerting_alerts, {to_string(static_cast<AlertKind>(k))}, d.count(static_cast<AlertKind>(k)));
  struct Totals {
    std::uint64_t delivered = 0, retries = 0, dropped_queue_full = 0, gave_up = 0;
  };
  std::map<std::string, Totals> by_name;
  for (const AsyncAlertOutlet* o : outlets) {
    if (!o) continue;
    const OutletStats& s = o->stats();
    Totals& t = by_name[o->name()];
    t.delivered += s.delivered;
    t.retries += s.retries;
    t.dropped_queue_full += s.dropped_queue_full;
    t.gave_up += s.gave_up;
  }
  for (const auto& [name, t] : by_name) {
    m.counter(alerting_deliveries, {name}, t.delivered);
    m.counter(alerting_delivery_retries, {name}, t.retries);
    m.counter(alerting_dropped_alerts, {name, "queue_full"}, t.dropped_queue_full);
    m.counter(alerting_dropped_alerts, {name, "gave_up"}, t.gave_up);
  }
  std::uint64_t claimed = 0, duplicates = 0, failed_open = 0, passed = 0;
  for (const DedupeAlertOutlet* o : dedupes) {
    if (!o) continue;
    claimed += o->stats().claimed;
    duplicates += o->stats().duplicates;
    failed_open += o->stats().failed_open;
    passed += o->stats().passed;
  }
  // Always exported: 0 without alerts.dedupe.
  m.counter(alerting_dedupe, {"claimed"}, claimed);
  m.counter(alerting_dedupe, {"duplicate"}, duplicates);
  m.counter(alerting_dedupe, {"failed_open"}, failed_open);
  m.counter(alerting_dedupe, {"passed"}, passed);
}

}  // namespace salttap::alerting
