#pragma once
// What a config reload changes in `salttap run` (daemon/internal/config_reload.h):
// the alert outlets when their settings changed (built first: if that
// fails, nothing has changed), then the pipeline (correlator, audit,
// redaction, document filters, alert settings), the reconciler and the
// fleet's silence rules. The
// spool, the shipper, the tap and the checkpoint are not touched.

#include <functional>

#include "alerting/configured_outlets.h"
#include "alerting/reloadable_outlets.h"
#include "config/config.h"
#include "daemon/internal/config_reload.h"
#include "pipeline/document_pipeline.h"

namespace salttap::recovery {
class Reconciler;
}
namespace salttap::fleet {
class FleetKeeper;
}

namespace salttap::daemon {

class PipelineReload final : public ReloadTarget {
 public:
  // The outlets a config asks for (resolving the bus target may throw).
  using OutletsFor = std::function<alerting::OutletsConfig(const config::Config&)>;

  // `reconciler` and `fleet` may be null (reconcile off, fleet off).
  PipelineReload(pipeline::DocumentPipeline& pipeline, alerting::ReloadableOutlets& outlets, OutletsFor outlets_for,
                 recovery::Reconciler* reconciler, fleet::FleetKeeper* fleet = nullptr)
      : pipeline_(pipeline),
        outlets_(outlets),
        outlets_for_(std::move(outlets_for)),
        reconciler_(reconciler),
        fleet_(fleet) {}

  void apply(const config::Config& next) override;

 private:
  pipeline::DocumentPipeline& pipeline_;
  alerting::ReloadableOutlets& outlets_;
  OutletsFor outlets_for_;
  recovery::Reconciler* reconciler_;
  fleet::FleetKeeper* fleet_;
};

}  // namespace salttap::daemon
