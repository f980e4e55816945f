#pragma once
// The alert outlets the config asks for (log, webhook, bus event), shared by
// `watch --jobs` and `run`.

#include <memory>
#include <vector>

#include "common/metrics.h"
#include "correlator/alert_outlets.h"
#include "service/bus_options.h"
#include "service/config.h"

namespace salttap::service {

struct AlertOutlets {
  std::vector<std::shared_ptr<correlator::AlertOutlet>> all;
  std::shared_ptr<correlator::AsyncAlertOutlet> webhook, fire;

  void add_to(correlator::AlertDispatcher& dispatcher) const;
  void publish(Metrics& metrics, const correlator::AlertDispatcher& dispatcher) const;
  void stop();  // lets queued alerts go out (5 s at most)
};

AlertOutlets make_alert_outlets(const Config& config, const BusOptions& bus);

}  // namespace salttap::service
