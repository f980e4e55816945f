#include "web/job_browser.h"

#include <chrono>

#include <fmt/format.h>

#include "common/json_writer.h"
#include "common/log.h"
#include "http/curl_http_client.h"
#include "web/internal/api.h"
#include "web/internal/embedded_ui.h"
#include "web/request_guard.h"
#include "web/router.h"

namespace salttap::web {
namespace {

// Every answer: nothing from elsewhere, no framing, no sniffing. The page's
// script and style come from /ui/static/ only (no inline script to inject into).
void harden(WebResponse& r) {
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                         "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
}

std::string_view content_type_of(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "text/plain; charset=utf-8";
}

std::optional<std::string_view> embedded(std::string_view name) {
  for (const EmbeddedFile& f : embedded_ui_files())
    if (f.name == name) return f.text;
  return std::nullopt;
}

WebResponse plain(int status, std::string body) {
  return WebResponse{status, "text/plain; charset=utf-8", std::move(body), {}};
}

// An API answer of 400: {"error": "..."}, as the API's own.
WebResponse bad_request(std::string_view message) {
  std::string out;
  json::StringOut sink{out};
  json::Writer w(sink);
  w.StartObject();
  json::key(w, "error");
  json::string(w, message);
  w.EndObject();
  return WebResponse{400, "application/json; charset=utf-8", std::move(out), {{"Cache-Control", "no-store"}}};
}

}  // namespace

UiService::UiService(HttpClientFactory engine, indexer::IndexLayout layout, UiAuth auth, const Clock& clock,
                     bool root_redirect, HostAllowList hosts)
    : engine_(std::move(engine)),
      layout_(std::move(layout)),
      auth_(std::move(auth)),
      clock_(clock),
      root_redirect_(root_redirect),
      hosts_(std::move(hosts)) {}

WebHandler UiService::handler() {
  return [this](const WebRequest& request) { return handle(request); };
}

std::optional<WebResponse> UiService::handle(const WebRequest& request) {
  const std::string_view target = request.target;
  const bool ours = target == "/ui" || target.starts_with("/ui/") || target.starts_with("/ui?") ||
                    (root_redirect_ && (target.empty() || target == "/" || target.starts_with("/?")));
  if (!ours) return std::nullopt;
  const UiTarget t = route_ui(target, root_redirect_);
  const auto start = std::chrono::steady_clock::now();
  WebResponse r;
  const bool api = t.route == UiRoute::api_jobs || t.route == UiRoute::api_job || t.route == UiRoute::api_minions ||
                   t.route == UiRoute::api_minion || t.route == UiRoute::api_alerts;
  if (!hosts_.allows(request.host)) {
    // Before anything else: a rebound name learns nothing, not even whether a password is set.
    r = plain(421, "this host name is not one salttap answers to (listener.allowed_hosts)\n");
  } else if (request.method != "GET" && request.method != "HEAD") {
    r = plain(405, "only GET and HEAD\n");
    r.headers.emplace_back("Allow", "GET, HEAD");
  } else if (api && !same_origin(request)) {
    r = plain(403, "cross-origin requests are refused\n");
  } else if (const auto bad = invalid_utf8_part(t)) {
    r = api ? bad_request(fmt::format("{} is not valid UTF-8", *bad)) : plain(400, *bad + " is not valid UTF-8\n");
  } else if (!auth_.allows(request.authorization)) {
    r = plain(401, "authentication required\n");
    r.headers.emplace_back("WWW-Authenticate", std::string(UiAuth::kChallenge));
  } else {
    r = answer(request, t.route, t);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics_.request(t.route, r.status);
  if (r.status != 401 && r.status != 403 && r.status != 405 && r.status != 421) metrics_.api_latency(t.route, seconds);
  if (publish_to_) {
    std::lock_guard lock(publish_mutex_);
    metrics_.publish(*publish_to_);
  }
  log::debug("ui: {} {} -> {} in {:.1f} ms", request.method, request.target, r.status, seconds * 1000);
  harden(r);
  if (request.method == "HEAD") r.body.clear();
  return r;
}

WebResponse UiService::answer(const WebRequest& /*request*/, UiRoute route, const UiTarget& t) {
  switch (route) {
    case UiRoute::redirect: {
      WebResponse r = plain(301, "see " + t.location + "\n");
      r.headers.emplace_back("Location", t.location);
      return r;
    }
    case UiRoute::page: {
      const auto page = embedded("index.html");
      if (!page) return plain(500, "the page is not in this build\n");
      return WebResponse{
          200, std::string(content_type_of("index.html")), std::string(*page), {{"Cache-Control", "no-cache"}}};
    }
    case UiRoute::asset: {
      const auto file = t.argument == "index.html" ? std::nullopt : embedded(t.argument);
      if (!file) return plain(404, "not found\n");
      return WebResponse{
          200, std::string(content_type_of(t.argument)), std::string(*file), {{"Cache-Control", "no-cache"}}};
    }
    case UiRoute::other:
      return plain(404, "not found\n");
    default:
      break;
  }
  auto client = take_client();
  WebResponse r;
  try {
    const Micros now = clock_.now();
    if (route == UiRoute::api_jobs) r = ui_api_jobs(*client, layout_, t.query, now);
    if (route == UiRoute::api_job) r = ui_api_job(*client, layout_, t.argument);
    if (route == UiRoute::api_minions) r = ui_api_minions(*client, layout_, t.query, now);
    if (route == UiRoute::api_minion) r = ui_api_minion(*client, layout_, t.argument, t.query, now);
    if (route == UiRoute::api_alerts) r = ui_api_alerts(*client, layout_, t.query, now);
  } catch (...) {
    give_back(std::move(client));
    throw;
  }
  give_back(std::move(client));
  return r;
}

std::unique_ptr<http::HttpClient> UiService::take_client() {
  {
    std::lock_guard lock(clients_mutex_);
    if (!idle_clients_.empty()) {
      auto client = std::move(idle_clients_.back());
      idle_clients_.pop_back();
      return client;
    }
  }
  return engine_();
}

void UiService::give_back(std::unique_ptr<http::HttpClient> client) {
  std::lock_guard lock(clients_mutex_);
  idle_clients_.push_back(std::move(client));
}

bool loopback_listen(const std::string& listen) {
  const std::string host = listen.substr(0, listen.rfind(':'));
  return host == "localhost" || host.starts_with("127.") || host == "[::1]" || host == "::1";
}

std::unique_ptr<UiService> make_ui_service(const http::HttpClientConfig& http, const indexer::IndexLayout& layout,
                                           UiAuth auth, const Clock& clock, bool root_redirect, HostAllowList hosts) {
  return std::make_unique<UiService>([http] { return http::make_curl_client(http); }, layout, std::move(auth), clock,
                                     root_redirect, std::move(hosts));
}

}  // namespace salttap::web
