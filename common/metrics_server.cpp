#include "common/metrics_server.h"

#include <stdexcept>
#include <thread>

#include "common/asio.h"
#include "common/internal/http_session.h"
#include "common/log.h"
#include "common/thread_name.h"

#include <boost/asio/thread_pool.hpp>

namespace salttap {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;

namespace {

ListenerLimits checked_limits(ListenerLimits limits) {
  std::string warning;
  auto fitted = fit_to_fd_budget(std::move(limits), current_nofile_limit(), warning);
  if (!fitted) throw std::runtime_error("metrics listener: " + warning);
  if (!warning.empty()) log::warn("metrics: {}", warning);
  return *fitted;
}

HttpAnswer to_answer(WebResponse out) {
  HttpAnswer a{static_cast<http::status>(out.status), 11};
  a.set(http::field::content_type, out.content_type);
  for (const auto& [name, value] : out.headers) a.set(name, value);
  a.body() = std::move(out.body);
  add_security_headers(a);
  return a;
}

WebRequest to_web_request(const HttpRequest& r) {
  return WebRequest{std::string(r.method_string()),
                    std::string(r.target()),
                    std::string(r[http::field::authorization]),
                    std::string(r[http::field::host]),
                    std::string(r[http::field::origin]),
                    std::string(r["Sec-Fetch-Site"])};
}

}  // namespace

struct MetricsServer::Impl final : SessionHost {
  Impl(const std::string& listen, Metrics& m, std::function<bool()> h, WebHandler p, ListenerLimits l,
       std::function<std::string()> d)
      : listener_limits(checked_limits(std::move(l))),
        metrics(m),
        healthy(std::move(h)),
        health_detail(std::move(d)),
        pages(std::move(p)),
        acceptor(io) {
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos) throw std::runtime_error("metrics listen address must be HOST:PORT: " + listen);
    std::string host = listen.substr(0, colon);
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    const tcp::endpoint ep(asio::ip::make_address(host),
                           static_cast<std::uint16_t>(std::stoi(listen.substr(colon + 1))));
    acceptor.open(ep.protocol());
    acceptor.set_option(asio::socket_base::reuse_address(true));
    acceptor.bind(ep);
    acceptor.listen();
    publish();
    accept();
    thread = std::thread([this] {
      name_this_thread("metrics-http");
      io.run();
    });
  }
  ~Impl() override {
    workers.stop();
    workers.join();
    io.stop();
    if (thread.joinable()) thread.join();
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const ListenerLimits& limits() const override { return listener_limits; }
  ListenerCounters& counters() override { return listener_counters; }

  void accept() {
    acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) {
        // Out of file handles (EMFILE) or the like: wait a little rather than spin.
        log::warn("metrics: accept failed: {}", ec.message());
        retry.expires_after(std::chrono::milliseconds(100));
        retry.async_wait([this](boost::system::error_code) { accept(); });
        return;
      }
      if (listener_counters.open.load() >= static_cast<std::int64_t>(listener_limits.max_connections)) {
        listener_counters.refused_cap.fetch_add(1);
        refuse_over_cap(std::move(socket));
      } else {
        start_http_session(std::move(socket), *this);
      }
      accept();
    });
  }

  void answer(const HttpRequest& request, std::function<void(HttpAnswer)> done) override {
    const std::string_view target(request.target().data(), request.target().size());
    if (target == "/metrics" || target == "/healthz") return done(own(request, target));
    if (!pages) return done(to_answer(WebResponse{404, "text/plain; charset=utf-8", "not found\n", {}}));
    // Off this thread: the handler may wait for the engine.
    asio::post(workers, [this, in = to_web_request(request), done = std::move(done)] {
      std::optional<WebResponse> out;
      try {
        out = pages(in);
      } catch (const std::exception& e) {
        log::error("http: {} {}: {}", in.method, in.target, e.what());
        out = WebResponse{500, "text/plain; charset=utf-8", "internal error\n", {}};
      }
      if (!out) out = WebResponse{404, "text/plain; charset=utf-8", "not found\n", {}};
      done(to_answer(std::move(*out)));
    });
  }

  // /metrics and /healthz: GET and HEAD only.
  HttpAnswer own(const HttpRequest& request, std::string_view target) {
    const bool head = request.method() == http::verb::head;
    if (request.method() != http::verb::get && !head) {
      HttpAnswer a = to_answer(WebResponse{405, "text/plain; charset=utf-8", "only GET and HEAD\n", {}});
      a.set(http::field::allow, "GET, HEAD");
      return a;
    }
    WebResponse out;
    if (target == "/metrics") {
      publish();
      out = WebResponse{200, "text/plain; version=0.0.4", metrics.render(), {}};
    } else {
      const bool ok = healthy();
      out = WebResponse{ok ? 200 : 503, "text/plain; charset=utf-8", ok ? "ok\n" : "unhealthy\n", {}};
      if (health_detail) out.body += health_detail() + "\n";
    }
    if (head) out.body.clear();
    return to_answer(std::move(out));
  }

  void publish() {
    const auto& c = listener_counters;
    metrics.gauge(MetricId::listener_connections, static_cast<double>(c.open.load()));
    metrics.gauge(MetricId::listener_max_connections, static_cast<double>(listener_limits.max_connections));
    metrics.counter(MetricId::listener_refused, {"connection_cap"}, c.refused_cap.load());
    metrics.counter(MetricId::listener_refused, {"header_too_large"}, c.refused_header.load());
    metrics.counter(MetricId::listener_refused, {"target_too_long"}, c.refused_target.load());
    metrics.counter(MetricId::listener_refused, {"bad_request"}, c.refused_bad.load());
    metrics.counter(MetricId::listener_timeouts, {"header"}, c.timeout_header.load());
    metrics.counter(MetricId::listener_timeouts, {"idle"}, c.timeout_idle.load());
    metrics.counter(MetricId::listener_timeouts, {"request"}, c.timeout_request.load());
  }

  // Declared first, destroyed last: sessions still queued in `io` or `workers` count themselves out into them.
  const ListenerLimits listener_limits;
  ListenerCounters listener_counters;
  Metrics& metrics;
  std::function<bool()> healthy;
  std::function<std::string()> health_detail;
  WebHandler pages;
  asio::io_context io;
  // Concurrent page answers; each waits at most for one engine search at a time.
  asio::thread_pool workers{4};
  tcp::acceptor acceptor;
  asio::steady_timer retry{io};
  std::thread thread;
};

MetricsServer::MetricsServer(const std::string& listen, Metrics& metrics, std::function<bool()> healthy,
                             WebHandler pages, ListenerLimits limits, std::function<std::string()> health_detail)
    : impl_(std::make_unique<Impl>(listen, metrics, std::move(healthy), std::move(pages), std::move(limits),
                                   std::move(health_detail))) {
  log::info("metrics: serving /metrics and /healthz on {}:{} (at most {} connections)",
            impl_->acceptor.local_endpoint().address().to_string(), port(), impl_->listener_limits.max_connections);
}

MetricsServer::~MetricsServer() = default;

std::uint16_t MetricsServer::port() const { return impl_->acceptor.local_endpoint().port(); }

const ListenerLimits& MetricsServer::limits() const { return impl_->listener_limits; }

}  // namespace salttap
