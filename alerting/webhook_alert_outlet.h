#pragma once
// Alerts to a webhook: HTTP POST of the alert's JSON payload to one URL, 2xx
// = delivered, anything else or a transport error = retried (async outlet).
// The request goes through salttap's HttpClient (http/http_client.h),
// so the webhook has the same TLS options (CA file, client certificate,
// verification) and credentials in the URL are kept out of logs.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "alerting/async_alert_outlet.h"
#include "http/http_client.h"

namespace salttap::alerting {

struct WebhookConfig {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::chrono::milliseconds timeout{10'000};
  http::TlsConfig tls;
  RetryPolicy retry;
  bool operator==(const WebhookConfig&) const = default;
};

// The HttpClient settings for `config`: its URL's origin as the one host, its
// headers, the timeout for connecting and for the whole request.
http::HttpClientConfig webhook_http_config(const WebhookConfig& config);
// The request path (and query) of `url`: "/" when it has none.
std::string webhook_path(const std::string& url);

class WebhookAlertOutlet final : public AsyncAlertOutlet {
 public:
  // `client` was made for webhook_http_config(config); the outlet's worker
  // is its only user.
  WebhookAlertOutlet(WebhookConfig config, std::unique_ptr<http::HttpClient> client,
                     SteadyTime& time = real_steady_time(), UnitRandom random = system_unit_random());
  ~WebhookAlertOutlet() override;

 private:
  std::string deliver(const correlator::Alert& alert) override;
  void interrupt() override { client_->abort(); }

  WebhookConfig config_;
  std::string path_;
  std::unique_ptr<http::HttpClient> client_;
};

}  // namespace salttap::alerting
