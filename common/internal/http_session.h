#pragma once
// One client connection of the metrics listener (common/metrics_server.h), on
// Boost.Beast: the request read under the listener's limits (a header
// timeout, an idle keep-alive timeout, a request deadline, all by
// beast::tcp_stream::expires_after; a header and target size limit answered
// 431 / 414), handed to the listener, its answer written, and the next request
// read when both sides keep the connection alive. Runs on the listener's one
// I/O thread; an answer may come from another thread and is posted back.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "common/asio.h"
#include "common/listener_limits.h"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace salttap {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpAnswer = boost::beast::http::response<boost::beast::http::string_body>;

// What the listener counts of its connections (salttap_listener_* metrics).
struct ListenerCounters {
  std::atomic<std::int64_t> open{0};
  std::atomic<std::uint64_t> refused_cap{0}, refused_header{0}, refused_target{0}, refused_bad{0};
  std::atomic<std::uint64_t> timeout_header{0}, timeout_idle{0}, timeout_request{0};
};

// What a session needs of its listener.
class SessionHost {
 public:
  virtual ~SessionHost() = default;
  virtual const ListenerLimits& limits() const = 0;
  virtual ListenerCounters& counters() = 0;
  // Answers `request` by calling `done` once, on any thread.
  virtual void answer(const HttpRequest& request, std::function<void(HttpAnswer)> done) = 0;
};

// The headers every answer of the listener carries, unless it set its own.
void add_security_headers(HttpAnswer& answer);

// Starts serving an accepted socket; the session keeps itself alive until the connection closes.
void start_http_session(boost::asio::ip::tcp::socket socket, SessionHost& host);

// Turns an accepted socket away at once: 503, then closed. Never blocks.
void refuse_over_cap(boost::asio::ip::tcp::socket socket);

}  // namespace salttap
