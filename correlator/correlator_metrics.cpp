#include "correlator/correlator_metrics.h"

namespace salttap::correlator {

void publish_correlator_metrics(Metrics& m, const Correlator& c) {
  using enum MetricId;
  const CorrelatorStats& s = c.stats();
  m.counter(correlator_events, s.events);
  m.counter(correlator_jobs_opened, s.jobs_opened);
  m.counter(correlator_jobs_settled, s.jobs_settled);
  m.counter(correlator_returns, s.returns);
  m.counter(correlator_late_returns, s.late_returns);
  m.counter(correlator_duplicate_returns, s.duplicate_returns);
  m.counter(correlator_unexpected_returns, s.unexpected_returns);
  m.counter(correlator_missing_minions, s.missing_minions);
  m.counter(correlator_find_job_extensions, s.find_job_extensions);
  m.counter(correlator_noise_events, s.noise_events);
  m.counter(correlator_evicted_jobs, s.evicted_jobs);
  m.counter(correlator_budget_evicted_jobs, {"settled"}, s.budget_evicted_settled);
  m.counter(correlator_budget_evicted_jobs, {"open"}, s.budget_evicted_open);
  m.counter(correlator_late_unknown_returns, s.late_unknown_returns);
  m.gauge(correlator_tracked_jobs, static_cast<double>(c.tracked_jobs()));
  m.gauge(correlator_settled_jobs, static_cast<double>(c.settled_jobs()));
  m.gauge(correlator_jobs_bytes, static_cast<double>(c.jobs_bytes()));
  m.gauge(correlator_memory_budget_bytes, static_cast<double>(c.config().memory_budget));
  m.gauge(correlator_known_minions, static_cast<double>(c.minions().size()));
}

}  // namespace salttap::correlator
