#include "web/web_metrics.h"

#include <algorithm>
#include <string>

namespace salttap::web {
namespace {

// In the catalog's order (common/metric_catalog.cpp).
constexpr UiRoute kRouteOrder[] = {UiRoute::page,        UiRoute::asset,      UiRoute::api_jobs,   UiRoute::api_job,
                                   UiRoute::api_minions, UiRoute::api_minion, UiRoute::api_alerts, UiRoute::other};
constexpr int kStatusOrder[] = {200, 301, 400, 401, 403, 404, 405, 421, 500, 502};
constexpr UiRoute kApiRouteOrder[] = {UiRoute::api_jobs, UiRoute::api_job, UiRoute::api_minions, UiRoute::api_minion,
                                      UiRoute::api_alerts};

std::size_t route_index(UiRoute route) {
  const auto* it =
      std::find(std::begin(kRouteOrder), std::end(kRouteOrder), route == UiRoute::redirect ? UiRoute::other : route);
  return static_cast<std::size_t>(it - std::begin(kRouteOrder));
}

std::size_t status_index(int status) {
  const auto* it = std::find(std::begin(kStatusOrder), std::end(kStatusOrder), status);
  if (it == std::end(kStatusOrder)) it = std::find(std::begin(kStatusOrder), std::end(kStatusOrder), 500);
  return static_cast<std::size_t>(it - std::begin(kStatusOrder));
}

}  // namespace

void UiMetrics::request(UiRoute route, int status) {
  requests_[route_index(route)][status_index(status)].fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t UiMetrics::requests(UiRoute route, int status) const {
  return requests_[route_index(route)][status_index(status)].load(std::memory_order_relaxed);
}

void UiMetrics::api_latency(UiRoute route, double seconds) {
  const auto* api = std::find(std::begin(kApiRouteOrder), std::end(kApiRouteOrder), route);
  if (api == std::end(kApiRouteOrder)) return;
  Latency& l = latency_[static_cast<std::size_t>(api - std::begin(kApiRouteOrder))];
  const auto bounds = metric_spec(MetricId::ui_api_request_duration_seconds).buckets;
  for (std::size_t i = 0; i < bounds.size() && i < kBuckets; ++i)
    if (seconds <= bounds[i]) {
      l.buckets[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  l.count.fetch_add(1, std::memory_order_relaxed);
  l.micros.fetch_add(static_cast<std::uint64_t>(std::max(0.0, seconds) * 1e6), std::memory_order_relaxed);
}

void UiMetrics::publish(Metrics& metrics) const {
  for (std::size_t r = 0; r < std::size(kRouteOrder); ++r)
    for (std::size_t s = 0; s < std::size(kStatusOrder); ++s)
      metrics.counter(MetricId::ui_requests, {to_string(kRouteOrder[r]), std::to_string(kStatusOrder[s])},
                      requests_[r][s].load(std::memory_order_relaxed));
  for (std::size_t a = 0; a < std::size(kApiRouteOrder); ++a) {
    const Latency& l = latency_[a];
    std::array<std::uint64_t, kBuckets> cumulative{};
    std::uint64_t running = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) cumulative[i] = running += l.buckets[i].load(std::memory_order_relaxed);
    metrics.histogram(MetricId::ui_api_request_duration_seconds, {to_string(kApiRouteOrder[a])}, cumulative,
                      static_cast<double>(l.micros.load(std::memory_order_relaxed)) / 1e6,
                      l.count.load(std::memory_order_relaxed));
  }
}

}  // namespace salttap::web
