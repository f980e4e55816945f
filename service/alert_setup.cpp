#include "service/alert_setup.h"

#include "correlator/correlator_metrics.h"

namespace salttap::service {

AlertOutlets make_alert_outlets(const Config& cfg, const BusOptions& bus) {
  AlertOutlets o;
  if (cfg.alert_log) o.all.push_back(std::make_shared<correlator::LogAlertOutlet>());
  if (cfg.webhook) {
    o.webhook = std::make_shared<correlator::WebhookAlertOutlet>(*cfg.webhook);
    o.all.push_back(o.webhook);
  }
  if (cfg.alert_fire_event) {
    o.fire = std::make_shared<correlator::FireAlertOutlet>(bus.pub(), bus.pull());
    o.all.push_back(o.fire);
  }
  return o;
}

void AlertOutlets::add_to(correlator::AlertDispatcher& dispatcher) const {
  for (const auto& outlet : all) dispatcher.add(outlet);
}

void AlertOutlets::publish(Metrics& metrics, const correlator::AlertDispatcher& dispatcher) const {
  correlator::publish_alert_metrics(metrics, dispatcher, "", nullptr);
  if (webhook) correlator::publish_alert_metrics(metrics, dispatcher, "webhook", webhook.get());
  if (fire) correlator::publish_alert_metrics(metrics, dispatcher, "fire", fire.get());
}

void AlertOutlets::stop() {
  if (webhook) webhook->stop();
  if (fire) fire->stop();
}

}  // namespace salttap::service
