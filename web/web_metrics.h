#pragma once
// What the job browser counts, by its worker threads, and publishes to
// /metrics: requests by route and status (salttap_ui_requests_total) and
// the time each API call took (salttap_ui_api_request_duration_seconds,
// a histogram). Every combination is published, zeros included.

#include <array>
#include <atomic>
#include <cstdint>

#include "common/metrics.h"
#include "web/router.h"

namespace salttap::web {

class UiMetrics {
 public:
  // A status the catalog does not list counts as 500 (none is answered today).
  void request(UiRoute route, int status);
  // An API route's answer time; other routes are not timed.
  void api_latency(UiRoute route, double seconds);
  void publish(Metrics& metrics) const;

  std::uint64_t requests(UiRoute route, int status) const;

 private:
  static constexpr std::size_t kRoutes = 8, kStatuses = 10, kApiRoutes = 5, kBuckets = 11;
  std::array<std::array<std::atomic<std::uint64_t>, kStatuses>, kRoutes> requests_{};
  struct Latency {
    std::array<std::atomic<std::uint64_t>, kBuckets> buckets{};  // not cumulative: one per bound it fell under first
    std::atomic<std::uint64_t> count{0};
    std::atomic<std::uint64_t> micros{0};
  };
  std::array<Latency, kApiRoutes> latency_{};
};

}  // namespace salttap::web
