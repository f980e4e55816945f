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

}  // namespace salttap::correlator
