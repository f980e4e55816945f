// The Metrics registry (only what the catalog declares, rendered in the
// catalog's order) and /metrics and /healthz over real HTTP.

#include <gtest/gtest.h>

#include <curl/curl.h>

#include <atomic>
#include <stdexcept>

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
  m.counter(MetricId::tap_events, 42);
  m.counter(MetricId::tap_skipped_frames, {"oversize"}, 2);
  m.counter(MetricId::tap_skipped_frames, {"invalid"}, 3);
  m.gauge(MetricId::tap_connected, 1);
  std::atomic<bool> healthy{true};
  MetricsServer server("127.0.0.1:0", m, [&] { return healthy.load(); });

  auto [status, body] = get(server.port(), "/metrics");
  EXPECT_EQ(status, 200);
  EXPECT_NE(body.find("# HELP salttap_tap_events_total Events decoded\n"
                      "# TYPE salttap_tap_events_total counter\n"
                      "salttap_tap_events_total 42\n"),
            std::string::npos);
  EXPECT_NE(body.find("salttap_tap_skipped_frames_total{reason=\"invalid\"} 3\n"), std::string::npos);
  EXPECT_NE(body.find("# TYPE salttap_tap_connected gauge\n"), std::string::npos);
  m.counter(MetricId::tap_events, 43);
  EXPECT_NE(get(server.port(), "/metrics").second.find("salttap_tap_events_total 43\n"), std::string::npos);

  EXPECT_EQ(get(server.port(), "/healthz").first, 200);
  healthy = false;
  EXPECT_EQ(get(server.port(), "/healthz").first, 503);
  EXPECT_EQ(get(server.port(), "/nope").first, 404);
}

TEST(Metrics, RendersFamiliesInCatalogOrderWithTheCatalogsHelpAndLabels) {
  Metrics m;
  m.counter(MetricId::spool_dropped_documents, {"state", "full"}, 7);
  m.gauge(MetricId::tap_connected, 0);
  m.counter(MetricId::spool_dropped_documents, {"event", "io_error"}, 1);
  EXPECT_EQ(m.render(),
            "# HELP salttap_tap_connected 1 while connected to the bus\n"
            "# TYPE salttap_tap_connected gauge\n"
            "salttap_tap_connected 0\n"
            "# HELP salttap_spool_dropped_documents_total Documents the spool could not take, by class and reason "
            "(full: the full-spool policy)\n"
            "# TYPE salttap_spool_dropped_documents_total counter\n"
            "salttap_spool_dropped_documents_total{class=\"event\",reason=\"io_error\"} 1\n"
            "salttap_spool_dropped_documents_total{class=\"state\",reason=\"full\"} 7\n");
}

TEST(Metrics, ASummaryHasASumAndACount) {
  Metrics m;
  m.summary(MetricId::indexer_bulk_request_duration_seconds, 1.5, 4);
  EXPECT_EQ(m.render(),
            "# HELP salttap_indexer_bulk_request_duration_seconds Time in bulk requests\n"
            "# TYPE salttap_indexer_bulk_request_duration_seconds summary\n"
            "salttap_indexer_bulk_request_duration_seconds_sum 1.5\n"
            "salttap_indexer_bulk_request_duration_seconds_count 4\n");
}

TEST(Metrics, RefusesWhatTheCatalogDoesNotDeclare) {
  Metrics m;
  EXPECT_THROW(m.gauge(MetricId::tap_events, 1), std::logic_error) << "a counter published as a gauge";
  EXPECT_THROW(m.counter(MetricId::tap_skipped_frames, 1), std::logic_error) << "a label missing";
  EXPECT_THROW(m.counter(MetricId::tap_events, {"x"}, 1), std::logic_error) << "a label too many";
  EXPECT_THROW(m.counter(MetricId::tap_skipped_frames, {"bogus"}, 1), std::logic_error) << "an undeclared value";
  EXPECT_THROW(m.counter(MetricId::spool_dropped_documents, {"full", "job"}, 1), std::logic_error)
      << "values in the wrong order";
  EXPECT_EQ(m.render(), "") << "nothing refused was kept";
}

TEST(MetricsServer, ABadAddressIsAClearError) {
  Metrics m;
  EXPECT_THROW(MetricsServer("nonsense", m), std::exception);
}

}  // namespace
}  // namespace salttap
