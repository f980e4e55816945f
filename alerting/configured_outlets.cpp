#include "alerting/configured_outlets.h"

#include "alerting/internal/alert_metrics.h"
#include "alerting/internal/fire_alert_outlet.h"
#include "alerting/internal/log_alert_outlet.h"
#include "http/curl_http_client.h"

namespace salttap::alerting {

AlertOutlets make_alert_outlets(const OutletsConfig& config) {
  AlertOutlets o;
  if (config.log) o.all.push_back(std::make_shared<LogAlertOutlet>());
  if (config.webhook) {
    o.webhook = std::make_shared<WebhookAlertOutlet>(*config.webhook,
                                                     http::make_curl_client(webhook_http_config(*config.webhook)));
    o.all.push_back(o.webhook);
  }
  if (config.fire) {
    o.fire = std::make_shared<FireAlertOutlet>(config.fire->pub, config.fire->pull);
    o.all.push_back(o.fire);
  }
  return o;
}

void AlertOutlets::add_to(AlertDispatcher& dispatcher) const {
  for (const auto& outlet : all) dispatcher.add(outlet);
}

void AlertOutlets::publish(Metrics& metrics, const AlertDispatcher& dispatcher) const {
  publish_alert_metrics(metrics, dispatcher, {webhook.get(), fire.get()});
}

void AlertOutlets::stop() {
  if (webhook) webhook->stop();
  if (fire) fire->stop();
}

}  // namespace salttap::alerting
