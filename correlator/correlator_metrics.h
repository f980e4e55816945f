#pragma once
// The correlator's and alerts' metrics, in one place (docs/operations.md, "Metrics").

#include "common/metrics.h"
#include "correlator/alert_outlets.h"
#include "correlator/correlator.h"

namespace salttap::correlator {

void publish_correlator_metrics(Metrics& m, const Correlator& c);
void publish_alert_metrics(Metrics& m, const AlertDispatcher& d, const std::string& outlet,
                           const AsyncAlertOutlet* stats);

}  // namespace salttap::correlator
