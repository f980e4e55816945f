#pragma once
// The job browser behind one HTTP listener: `salttap ui`'s, or `run`'s
// metrics listener under /ui/. It answers a request (on a worker thread of
// the listener) with an embedded page or asset, or a JSON API call asked of
// the engine (internal/api.h), after the Host, Origin and UTF-8 checks
// (request_guard.h) and the optional basic auth (auth.h); it counts
// every answer (web_metrics.h). Paths outside /ui/ are not its own.
// Reference: docs/ui.md.

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/metrics_server.h"
#include "http/http_client.h"
#include "indexer/index_layout.h"
#include "web/auth.h"
#include "web/request_guard.h"
#include "web/router.h"
#include "web/web_metrics.h"

namespace salttap::web {

using HttpClientFactory = std::function<std::unique_ptr<http::HttpClient>()>;

class UiService {
 public:
  // `engine` makes a client per concurrent request (a client serves one
  // thread at a time); idle ones are kept for the next request.
  // `root_redirect`: "/" redirects to /ui/ (`salttap ui`). `hosts`: the Host
  // names it answers (others: 421), against DNS rebinding.
  UiService(HttpClientFactory engine, indexer::IndexLayout layout, UiAuth auth, const Clock& clock, bool root_redirect,
            HostAllowList hosts = {});

  // nullopt: not a path of the browser's.
  std::optional<WebResponse> handle(const WebRequest& request);
  // A WebHandler for MetricsServer, bound to this service.
  WebHandler handler();

  const UiMetrics& metrics() const { return metrics_; }
  // Publish the counts into `metrics` after every answer too (`salttap ui`:
  // /metrics then shows the request that came just before it).
  void publish_each_answer(Metrics& metrics) { publish_to_ = &metrics; }

 private:
  WebResponse answer(const WebRequest& request, UiRoute route, const UiTarget& target);
  std::unique_ptr<http::HttpClient> take_client();
  void give_back(std::unique_ptr<http::HttpClient> client);

  HttpClientFactory engine_;
  indexer::IndexLayout layout_;
  UiAuth auth_;
  const Clock& clock_;
  bool root_redirect_;
  HostAllowList hosts_;
  UiMetrics metrics_;
  Metrics* publish_to_ = nullptr;
  std::mutex publish_mutex_;  // one publisher at a time: the last to publish read the newest counts
  std::mutex clients_mutex_;
  std::vector<std::unique_ptr<http::HttpClient>> idle_clients_;
};

// Whether a listen address ("HOST:PORT") is on the loopback interface.
bool loopback_listen(const std::string& listen);

// The browser over the engine `http` reaches, reading the indices of `layout`:
// one libcurl client per concurrent request.
std::unique_ptr<UiService> make_ui_service(const http::HttpClientConfig& http, const indexer::IndexLayout& layout,
                                           UiAuth auth, const Clock& clock, bool root_redirect, HostAllowList hosts);

}  // namespace salttap::web
