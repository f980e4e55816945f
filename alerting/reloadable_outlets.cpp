#include "alerting/reloadable_outlets.h"

#include "alerting/internal/alert_metrics.h"

namespace salttap::alerting {

ReloadableOutlets::ReloadableOutlets(OutletsConfig config, Factory make)
    : make_(std::move(make)), config_(std::move(config)), current_(make_(config_)) {}

ReloadableOutlets::~ReloadableOutlets() { stop(); }

bool ReloadableOutlets::replace(const OutletsConfig& config) {
  if (config == config_) return false;
  AlertOutlets next = make_(config);
  retired_.push_back(std::move(current_));
  current_ = std::move(next);
  config_ = config;
  AlertOutlets old = retired_.back();  // shared owners: the drain thread's copy
  draining_.emplace_back([old = std::move(old)]() mutable { old.stop(); });
  return true;
}

void ReloadableOutlets::publish(Metrics& metrics, const AlertDispatcher& dispatcher) const {
  std::vector<const AsyncAlertOutlet*> async{current_.webhook.get(), current_.fire.get()};
  std::vector<const DedupeAlertOutlet*> dedupes{current_.dedupe.get()};
  for (const AlertOutlets& o : retired_) {
    async.push_back(o.webhook.get());
    async.push_back(o.fire.get());
    dedupes.push_back(o.dedupe.get());
  }
  publish_alert_metrics(metrics, dispatcher, async, dedupes);
}

void ReloadableOutlets::stop() {
  current_.stop();
  for (std::thread& t : draining_)
    if (t.joinable()) t.join();
}

}  // namespace salttap::alerting
