#include "correlator/correlator_metrics.h"

namespace salttap::correlator {

void publish_correlator_metrics(Metrics& m, const Correlator& c) {
  const CorrelatorStats& s = c.stats();
  m.counter("salttap_correlator_events_total", s.events, "Events seen by the correlator");
  m.counter("salttap_correlator_jobs_opened_total", s.jobs_opened, "Jobs opened (all kinds)");
  m.counter("salttap_correlator_jobs_settled_total", s.jobs_settled, "Jobs settled");
  m.counter("salttap_correlator_returns_total{kind=\"any\"}", s.returns, "Minion returns, by kind");
  m.counter("salttap_correlator_returns_total{kind=\"late\"}", s.late_returns);
  m.counter("salttap_correlator_returns_total{kind=\"duplicate\"}", s.duplicate_returns);
  m.counter("salttap_correlator_returns_total{kind=\"unexpected\"}", s.unexpected_returns);
  m.counter("salttap_correlator_missing_minions_total", s.missing_minions, "Minions that missed a job's deadline");
  m.counter("salttap_correlator_find_job_extensions_total", s.find_job_extensions,
            "Deadlines extended by saltutil.find_job answers");
  m.counter("salttap_correlator_noise_events_total", s.noise_events, "find_job / saltutil.running traffic");
  m.counter("salttap_correlator_evicted_jobs_total", s.evicted_jobs, "Jobs evicted early: over max_jobs");
  m.gauge("salttap_correlator_tracked_jobs", static_cast<double>(c.tracked_jobs()), "Jobs held in memory");
  m.gauge("salttap_correlator_minions", static_cast<double>(c.minions().size()), "Minion ids known");
}

void publish_alert_metrics(Metrics& m, const AlertDispatcher& d, const std::string& outlet,
                           const AsyncAlertOutlet* o) {
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

}  // namespace salttap::correlator
