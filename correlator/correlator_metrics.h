#pragma once
// The correlator's metrics (docs/operations.md, "Metrics"); the alerts' are in
// alerting/alert_metrics.h.

#include "common/metrics.h"
#include "correlator/correlator.h"

namespace salttap::correlator {

void publish_correlator_metrics(Metrics& m, const Correlator& c);

}  // namespace salttap::correlator
