#include "alerting/configured_outlets.h"

#include "alerting/internal/alert_metrics.h"
#include "alerting/internal/fire_alert_outlet.h"
#include "alerting/internal/log_alert_outlet.h"
#include "http/curl_http_client.h"

#include <algorithm>

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
  if (config.dedupe) {
    http::HttpClientConfig http = config.dedupe->http;
    http.request_timeout = config.dedupe->timeout;
    http.connect_timeout = std::min(http.connect_timeout, config.dedupe->timeout);
    http.board = nullptr;  // its own host cooldowns: a claim must not wait on the shipper's view
    o.dedupe = std::make_shared<DedupeAlertOutlet>(std::move(o.all), http::make_curl_client(http), *config.dedupe);
    o.all = {o.dedupe};
  }
  return o;
}

void AlertOutlets::add_to(AlertDispatcher& dispatcher) const {
  for (const auto& outlet : all) dispatcher.add(outlet);
}

void AlertOutlets::publish(Metrics& metrics, const AlertDispatcher& dispatcher) const {
  publish_alert_metrics(metrics, dispatcher, {webhook.get(), fire.get()}, {dedupe.get()});
}

void AlertOutlets::stop() {
  if (dedupe) dedupe->stop();  // first: what it holds goes on to the others
  if (webhook) webhook->stop();
  if (fire) fire->stop();
}

}  // namespace salttap::alerting
