// /metrics and /healthz over real HTTP.

#include <gtest/gtest.h>

#include <curl/curl.h>

#include <atomic>

#include "common/metrics_server.h"

namespace salttap {
namespace {

std::size_t collect(char* p, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

std::pair<long, std::string> get(std::uint16_t port, const std::string& path) {
  CURL* c = curl_easy_init();
  std::string body;
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + path;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
  long status = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  return {status, body};
}

TEST(MetricsServer, ServesPrometheusTextAndHealth) {
  Metrics m;
  m.counter("salttap_tap_events_total", 42, "Events decoded");
  m.counter("salttap_tap_skipped_frames_total{reason=\"oversize\"}", 2, "Frames skipped");
  m.counter("salttap_tap_skipped_frames_total{reason=\"invalid\"}", 3);
  m.gauge("salttap_tap_connected", 1);
  std::atomic<bool> healthy{true};
  MetricsServer server("127.0.0.1:0", m, [&] { return healthy.load(); });

  auto [status, body] = get(server.port(), "/metrics");
  EXPECT_EQ(status, 200);
  EXPECT_NE(body.find("# TYPE salttap_tap_events_total counter\nsalttap_tap_events_total 42\n"), std::string::npos);
  EXPECT_NE(body.find("salttap_tap_skipped_frames_total{reason=\"invalid\"} 3\n"), std::string::npos);
  EXPECT_NE(body.find("# TYPE salttap_tap_connected gauge\n"), std::string::npos);
  m.counter("salttap_tap_events_total", 43);
  EXPECT_NE(get(server.port(), "/metrics").second.find("salttap_tap_events_total 43\n"), std::string::npos);

  EXPECT_EQ(get(server.port(), "/healthz").first, 200);
  healthy = false;
  EXPECT_EQ(get(server.port(), "/healthz").first, 503);
  EXPECT_EQ(get(server.port(), "/nope").first, 404);
}

TEST(MetricsServer, ABadAddressIsAClearError) {
  Metrics m;
  EXPECT_THROW(MetricsServer("nonsense", m), std::exception);
}

}  // namespace
}  // namespace salttap
