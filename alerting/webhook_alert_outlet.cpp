#include "alerting/webhook_alert_outlet.h"

#include <fmt/format.h>

namespace salttap::alerting {
namespace {

// "scheme://authority" ends where the path (or query, or fragment) begins.
std::size_t path_start(const std::string& url) {
  const auto scheme = url.find("://");
  const std::size_t authority = scheme == std::string::npos ? 0 : scheme + 3;
  const auto end = url.find_first_of("/?#", authority);
  return end == std::string::npos ? url.size() : end;
}

}  // namespace

http::HttpClientConfig webhook_http_config(const WebhookConfig& config) {
  http::HttpClientConfig http;
  http.hosts = {config.url.substr(0, path_start(config.url))};
  http.tls = config.tls;
  http.headers = config.headers;
  http.connect_timeout = config.timeout;
  http.request_timeout = config.timeout;
  // A receiver's answer is not read; a long one is cut off as an error (retried).
  http.max_response_bytes = 1u << 20;
  return http;
}

std::string webhook_path(const std::string& url) {
  std::string path = url.substr(path_start(url));
  const auto fragment = path.find('#');
  if (fragment != std::string::npos) path.erase(fragment);
  if (path.empty() || path.front() != '/') path.insert(0, "/");
  return path;
}

WebhookAlertOutlet::WebhookAlertOutlet(WebhookConfig config, std::unique_ptr<http::HttpClient> client, SteadyTime& time,
                                       UnitRandom random)
    : AsyncAlertOutlet("webhook", config.retry, time, std::move(random)),
      config_(std::move(config)),
      path_(webhook_path(config_.url)),
      client_(std::move(client)) {
  start();
}

WebhookAlertOutlet::~WebhookAlertOutlet() { stop(std::chrono::milliseconds(0)); }

std::string WebhookAlertOutlet::deliver(const correlator::Alert& alert) {
  http::HttpRequest request;
  request.method = "POST";
  request.path = path_;
  request.body = alert.json;
  const http::HttpResponse response = client_->send(request);
  if (response.status == 0) return response.error;
  if (response.status < 200 || response.status > 299) return fmt::format("HTTP {}", response.status);
  return {};
}

}  // namespace salttap::alerting
