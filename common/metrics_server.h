#pragma once
// GET /metrics (Prometheus text) and GET /healthz on a local address, served
// by Boost.Beast on its own thread. Binds where it is told (127.0.0.1 by
// default); never blocks the pipeline. Any other path can go to a handler
// (the job browser), run on worker threads of its own so that a slow answer
// there never delays /metrics or /healthz. Every connection is held to the
// limits of common/listener_limits.h (timeouts, a connection cap answered
// 503, 414 / 431 for oversized requests), so hostile clients cannot take the
// file handles the spool and the shipper need; /metrics and /healthz answer
// GET and HEAD only, and every answer carries the security headers.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/listener_limits.h"
#include "common/metrics.h"

namespace salttap {

struct WebRequest {
  std::string method;         // GET, POST, ...
  std::string target;         // path and query, as sent: "/ui/api/jobs?status=failed"
  std::string authorization;  // the Authorization header, if any
  std::string host;           // the Host header ("name:port"), if any
  std::string origin;         // the Origin header, if any (a browser's cross-origin or non-GET request)
  std::string fetch_site;     // Sec-Fetch-Site ("same-origin", "cross-site", ...), if any
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
  // when it cannot bind, or when RLIMIT_NOFILE leaves the listener no file
  // handle (a cap beyond the budget is lowered, with a WARN). `healthy`
  // decides /healthz (200 or 503); `pages` answers every other path (none:
  // 404). The listener's own counts (salttap_listener_*) are published into
  // `metrics` at every /metrics. `health_detail`, when given, adds a line to
  // /healthz's body after "ok" or "unhealthy" (run: the engine hosts and cluster).
  MetricsServer(
      const std::string& listen, Metrics& metrics, std::function<bool()> healthy = [] { return true; },
      WebHandler pages = {}, ListenerLimits limits = {}, std::function<std::string()> health_detail = {});
  ~MetricsServer();
  std::uint16_t port() const;
  // The limits in force (max_connections after the file-handle budget).
  const ListenerLimits& limits() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace salttap
