#pragma once
// GET /metrics (Prometheus text) and GET /healthz on a local address, served
// by Boost.Beast on its own thread. Binds where it is told (127.0.0.1 by
// default); never blocks the pipeline.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/metrics.h"

namespace salttap {

class MetricsServer {
 public:
  // `listen` is "HOST:PORT" (port 0: any free port). Throws std::runtime_error
  // when it cannot bind. `healthy` decides /healthz (200 or 503).
  MetricsServer(
      const std::string& listen, const Metrics& metrics, std::function<bool()> healthy = [] { return true; });
  ~MetricsServer();
  std::uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace salttap
