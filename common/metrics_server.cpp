#include "common/metrics_server.h"

#include <stdexcept>
#include <thread>

#include "common/asio.h"
#include "common/log.h"
#include "common/thread_name.h"

#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace salttap {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;

struct MetricsServer::Impl {
  Impl(const std::string& listen, const Metrics& m, std::function<bool()> h, WebHandler p)
      : metrics(m), healthy(std::move(h)), pages(std::move(p)), acceptor(io) {
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
    accept();
    thread = std::thread([this] {
      name_this_thread("metrics-http");
      io.run();
    });
  }
  ~Impl() {
    workers.stop();
    workers.join();
    io.stop();
    if (thread.joinable()) thread.join();
  }

  void accept() {
    acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (!ec) serve(std::make_shared<tcp::socket>(std::move(socket)));
      accept();
    });
  }

  void serve(const std::shared_ptr<tcp::socket>& socket) {
    auto buffer = std::make_shared<boost::beast::flat_buffer>();
    auto request = std::make_shared<http::request<http::string_body>>();
    http::async_read(*socket, *buffer, *request,
                     [this, socket, buffer, request](boost::system::error_code ec, std::size_t) {
                       if (ec) return;
                       auto response = std::make_shared<http::response<http::string_body>>();
                       response->version(request->version());
                       response->keep_alive(false);
                       if (request->target() == "/metrics") {
                         response->result(http::status::ok);
                         response->set(http::field::content_type, "text/plain; version=0.0.4");
                         response->body() = metrics.render();
                       } else if (request->target() == "/healthz") {
                         const bool ok = healthy();
                         response->result(ok ? http::status::ok : http::status::service_unavailable);
                         response->body() = ok ? "ok\n" : "unhealthy\n";
                       } else if (pages) {
                         // Off this thread: the handler may wait for the engine.
                         WebRequest in{std::string(request->method_string()), std::string(request->target()),
                                       std::string((*request)[http::field::authorization])};
                         asio::post(workers, [this, socket, response, in = std::move(in)] {
                           std::optional<WebResponse> out;
                           try {
                             out = pages(in);
                           } catch (const std::exception& e) {
                             log::error("http: {} {}: {}", in.method, in.target, e.what());
                             out = WebResponse{500, "text/plain; charset=utf-8", "internal error\n", {}};
                           }
                           if (!out) out = WebResponse{404, "text/plain; charset=utf-8", "not found\n", {}};
                           response->result(static_cast<unsigned>(out->status));
                           response->set(http::field::content_type, out->content_type);
                           for (const auto& [name, value] : out->headers) response->set(name, value);
                           response->body() = std::move(out->body);
                           asio::post(io, [socket, response] { write(socket, response); });
                         });
                         return;
                       } else {
                         response->result(http::status::not_found);
                         response->body() = "not found\n";
                       }
                       write(socket, response);
                     });
  }

  static void write(const std::shared_ptr<tcp::socket>& socket,
                    const std::shared_ptr<http::response<http::string_body>>& response) {
    response->prepare_payload();
    http::async_write(*socket, *response, [socket, response](boost::system::error_code, std::size_t) {
      boost::system::error_code ignored;
      socket->shutdown(tcp::socket::shutdown_both, ignored);
    });
  }

  const Metrics& metrics;
  std::function<bool()> healthy;
  WebHandler pages;
  asio::io_context io;
  // Concurrent page answers; each waits at most for one engine search at a time.
  asio::thread_pool workers{4};
  tcp::acceptor acceptor;
  std::thread thread;
};

MetricsServer::MetricsServer(const std::string& listen, const Metrics& metrics, std::function<bool()> healthy,
                             WebHandler pages)
    : impl_(std::make_unique<Impl>(listen, metrics, std::move(healthy), std::move(pages))) {
  log::info("metrics: serving /metrics and /healthz on {}:{}", impl_->acceptor.local_endpoint().address().to_string(),
            port());
}

MetricsServer::~MetricsServer() = default;

std::uint16_t MetricsServer::port() const { return impl_->acceptor.local_endpoint().port(); }

}  // namespace salttap
