#pragma once
// The alert outlets the config's alerts: section asks for - the log, a
// webhook (libcurl through http::make_curl_client), events on the master
// bus - built once, shared by `run` and `watch --jobs`. The alerts index is
// not among them: it exists only where documents are built (the document
// pipeline adds it).

#include <memory>
#include <optional>
#include <vector>

#include "alerting/alert_dispatcher.h"
#include "alerting/async_alert_outlet.h"
#include "alerting/dedupe_alert_outlet.h"
#include "alerting/webhook_alert_outlet.h"
#include "common/metrics.h"
#include "tap/endpoint.h"

namespace salttap::alerting {

// Where alert events go: fired into `pull`, the framing probed against `pub`.
struct BusTarget {
  tap::Endpoint pub, pull;
  bool operator==(const BusTarget& o) const {
    return pub.describe() == o.pub.describe() && pull.describe() == o.pull.describe();
  }
};

struct OutletsConfig {
  bool log = true;
  std::optional<WebhookConfig> webhook;
  std::optional<BusTarget> fire;       // alerts.fire_event
  std::optional<DedupeConfig> dedupe;  // alerts.dedupe: engine (the others behind it)
  bool operator==(const OutletsConfig&) const = default;
};

struct AlertOutlets {
  std::vector<std::shared_ptr<AlertOutlet>> all;  // what the dispatcher sends to
  std::shared_ptr<AsyncAlertOutlet> webhook, fire;
  std::shared_ptr<DedupeAlertOutlet> dedupe;  // with alerts.dedupe: engine, `all` is this one, the others behind it

  void add_to(AlertDispatcher& dispatcher) const;
  // salttap_alerting_alerts_total and each async outlet's delivery counters.
  void publish(Metrics& metrics, const AlertDispatcher& dispatcher) const;
  void stop();  // lets queued alerts go out (5 s at most)
};

AlertOutlets make_alert_outlets(const OutletsConfig& config);

}  // namespace salttap::alerting
