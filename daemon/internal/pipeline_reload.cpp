#include "daemon/internal/pipeline_reload.h"

#include "common/log.h"
#include "fleet/fleet_keeper.h"
#include "recovery/reconciler.h"

namespace salttap::daemon {

void PipelineReload::apply(const config::Config& next) {
  if (outlets_.replace(outlets_for_(next))) {
    pipeline_.set_alert_outlets(outlets_.current().all);
    log::info("reload: alert outlets rebuilt (log: {}, webhook: {}, bus events: {})", next.alert_log ? "on" : "off",
              next.webhook ? "on" : "off", next.alert_fire_event ? "on" : "off");
  }
  pipeline_.reconfigure(next);
  if (reconciler_) reconciler_->reconfigure(next);
  // The new silence rules judge open episodes at the next sweep (the keys are read again first).
  if (fleet_) fleet_->reconfigure(next.fleet, next.fleet.keys_dir);
  std::size_t open = 0;
  pipeline_.correlator().for_each_open([&open](const correlator::Job& /*job*/) { ++open; });
  log::info("reload: {} open jobs kept, with their expected minions and the deadlines they opened with", open);
}

}  // namespace salttap::daemon
