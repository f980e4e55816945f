#pragma once
// The alert outlets of `salttap run`, which a config reload may replace
// (daemon/internal/config_reload.h). replace() builds a new set only when the
// outlets' settings changed (alerts.log, alerts.webhook, alerts.fire_event).
// The replaced outlets get no new alert; each async one delivers what it
// holds, retries included, for up to 5 s as at shutdown, on a thread of its
// own, so the pipeline never waits for a slow webhook. Their delivery counts
// stay in the published totals, so no counter goes back.

#include <functional>
#include <thread>
#include <vector>

#include "alerting/alert_dispatcher.h"
#include "alerting/configured_outlets.h"
#include "common/metrics.h"

namespace salttap::alerting {

class ReloadableOutlets {
 public:
  using Factory = std::function<AlertOutlets(const OutletsConfig&)>;

  explicit ReloadableOutlets(OutletsConfig config, Factory make = make_alert_outlets);
  ~ReloadableOutlets();  // stop()
  ReloadableOutlets(const ReloadableOutlets&) = delete;
  ReloadableOutlets& operator=(const ReloadableOutlets&) = delete;

  const AlertOutlets& current() const { return current_; }
  const OutletsConfig& config() const { return config_; }

  // False, and nothing changes, when `config` is the running one. Else the
  // new set is built (if that throws, the running set stays and the
  // exception goes to the caller), becomes current, and the old one drains.
  // The caller hands current().all to the dispatcher.
  bool replace(const OutletsConfig& config);

  // salttap_alerting_*: the dispatcher's counts, and each outlet name's
  // deliveries over the current and every replaced outlet of that name.
  void publish(Metrics& metrics, const AlertDispatcher& dispatcher) const;

  // The current outlets deliver what they hold (5 s at most); then waits
  // for the replaced ones to finish draining.
  void stop();

 private:
  Factory make_;
  OutletsConfig config_;
  AlertOutlets current_;
  std::vector<AlertOutlets> retired_;
  std::vector<std::thread> draining_;
};

}  // namespace salttap::alerting
