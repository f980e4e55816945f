#include "alerting/alert_dispatcher.h"

namespace salttap::alerting {

void AlertDispatcher::on_job(correlator::JobUpdate update, const correlator::Job& job,
                             const correlator::MinionRegistry& minions) {
  if (update != correlator::JobUpdate::settled) return;  // one alert per job: late returns do not alert again
  auto alert = correlator::make_alert(job, minions, config_, master_id_);
  if (alert) dispatch(*alert);
}

void AlertDispatcher::dispatch(const correlator::Alert& alert) {
  for (auto k : alert.kinds) ++counts_[static_cast<std::size_t>(k)];
  for (auto& outlet : outlets_) outlet->send(alert);
}

}  // namespace salttap::alerting
