#pragma once
// GET /metrics (Prometheus text) and GET /healthz on a local address, served
// by Boost.Beast on its own thread. Binds where it is told (127.0.0.1 by
// default); never blocks the pipeline. Any other path can go to a handler
// (the job browser), run on worker threads of its own so that a slow answer
// there never delays /metrics or /healthz.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/metrics.h"

namespace salttap {

struct WebRequest {
  std::string method;         // GET, POST, ...
  std::string target;         // path and query, as sent: "/ui/api/jobs?status=failed"
  std::string authorization;  // the Authorization header, if any
};

struct WebResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // more headers (Location, WWW-Authenticate...)
};

// nullopt: not its path (404).
using WebHandler = std::function<std::optional<WebResponse>(const WebRequest&)>;

class MetricsServer {
 public:
  // `listen` is "HOST:PORT" (port 0: any free port). Throws std::runtime_error
  // when it cannot bind. `healthy` decides /healthz (200 or 503); `pages`
  // answers every other path (none: 404).
  MetricsServer(
      const std::string& listen, const Metrics& metrics, std::function<bool()> healthy = [] { return true; },
      WebHandler pages = {});
  ~MetricsServer();
  std::uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace salttap
