#include "common/internal/http_session.h"

#include <algorithm>
#include <array>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace salttap {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

// Only GET and HEAD are answered: a body is never needed, so a small one is plenty.
constexpr std::uint64_t kMaxBodyBytes = std::uint64_t{64} * 1024;
// How long a refused request's connection is drained before it closes: so the
// client reads the 414 / 431 instead of a reset.
constexpr std::chrono::milliseconds kMaxLinger{2000};

HttpAnswer plain_answer(http::status status, unsigned version, std::string_view body) {
  HttpAnswer a{status, version};
  a.set(http::field::content_type, "text/plain; charset=utf-8");
  a.body() = std::string(body);
  a.keep_alive(false);
  add_security_headers(a);
  a.prepare_payload();
  return a;
}

bool is_parse_error(const beast::error_code& ec) {
  return ec.category() == beast::error_code(http::error::bad_target).category();
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, SessionHost& host)
      : stream_(std::move(socket)),
        host_(host),
        limits_(host.limits()),
        counters_(host.counters()),
        buffer_(limits_.max_header_bytes + kMaxBodyBytes) {
    counters_.open.fetch_add(1);
  }
  ~Session() { counters_.open.fetch_sub(1); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void read_header() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(limits_.max_header_bytes, UINT32_MAX)));
    parser_->body_limit(kMaxBodyBytes);
    stream_.expires_after(first_ ? limits_.header_timeout : limits_.idle_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

 private:
  void on_header(beast::error_code ec) {
    if (ec == beast::error::timeout) {  // tcp_stream closed the socket
      (first_ ? counters_.timeout_header : counters_.timeout_idle).fetch_add(1);
      return;
    }
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      if (request_line_too_long())
        return refuse(http::status::uri_too_long, counters_.refused_target, "request target too long\n");
      return refuse(http::status::request_header_fields_too_large, counters_.refused_header,
                    "request header too large\n");
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) return;
    if (ec) {
      if (is_parse_error(ec)) refuse(http::status::bad_request, counters_.refused_bad, "bad request\n");
      return;
    }
    // The header is whole: the rest of the request, its answer and its writing within one deadline.
    stream_.expires_after(limits_.request_timeout);
    if (parser_->get().target().size() > limits_.max_target_bytes)
      return refuse(http::status::uri_too_long, counters_.refused_target, "request target too long\n");
    if (parser_->is_done()) return dispatch();
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code e, std::size_t) { self->on_body(e); });
  }

  void on_body(beast::error_code ec) {
    if (ec == beast::error::timeout) {
      counters_.timeout_request.fetch_add(1);
      return;
    }
    if (ec == http::error::body_limit)
      return refuse(http::status::payload_too_large, counters_.refused_bad, "request body too large\n");
    if (ec) {
      if (is_parse_error(ec)) refuse(http::status::bad_request, counters_.refused_bad, "bad request\n");
      return;
    }
    dispatch();
  }

  void dispatch() {
    request_ = parser_->release();
    host_.answer(request_, [self = shared_from_this()](HttpAnswer answer) {
      // The answer may come from a worker thread: the stream is the I/O thread's.
      asio::post(self->stream_.get_executor(),
                 [self, answer = std::move(answer)]() mutable { self->write(std::move(answer)); });
    });
  }

  void write(HttpAnswer answer) {
    answer_ = std::move(answer);
    answer_.version(request_.version());
    answer_.keep_alive(request_.keep_alive());
    answer_.prepare_payload();
    http::async_write(stream_, answer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec == beast::error::timeout) self->counters_.timeout_request.fetch_add(1);
      if (ec) return;
      if (!self->answer_.keep_alive()) return self->linger();
      self->first_ = false;
      self->read_header();
    });
  }

  // Whether it is the request line that is too long: Beast parses the request
  // line first, so a request whose header fields overflow has its target set.
  bool request_line_too_long() const {
    const auto target = parser_->get().target();
    return target.empty() || target.size() > limits_.max_target_bytes;
  }

  void refuse(http::status status, std::atomic<std::uint64_t>& counter, std::string_view body) {
    counter.fetch_add(1);
    answer_ = plain_answer(status, 11, body);
    stream_.expires_after(std::min<std::chrono::milliseconds>(kMaxLinger, limits_.header_timeout));
    http::async_write(stream_, answer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec) self->linger();
    });
  }

  // Our side is done: read what the client still sends until it closes or
  // the expiry comes, so closing does not reset the answer away.
  void linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::min<std::chrono::milliseconds>(kMaxLinger, limits_.idle_timeout));
    drain();
  }
  void drain() {
    stream_.async_read_some(asio::buffer(discard_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec) self->drain();
    });
  }

  beast::tcp_stream stream_;
  SessionHost& host_;
  const ListenerLimits& limits_;
  ListenerCounters& counters_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpRequest request_;
  HttpAnswer answer_;
  std::array<char, 4096> discard_{};
  bool first_ = true;
};

std::string over_cap_answer() {
  HttpAnswer a = plain_answer(http::status::service_unavailable, 11, "too many connections\n");
  a.set(http::field::retry_after, "1");
  std::ostringstream out;
  out << a;
  return out.str();
}

}  // namespace

void add_security_headers(HttpAnswer& answer) {
  // Plain text and metrics: nothing to run, frame or sniff.
  if (answer.find("Content-Security-Policy") == answer.end())
    answer.set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
  answer.set("X-Content-Type-Options", "nosniff");
  answer.set("X-Frame-Options", "DENY");
  answer.set("Referrer-Policy", "no-referrer");
}

void start_http_session(tcp::socket socket, SessionHost& host) {
  std::make_shared<Session>(std::move(socket), host)->read_header();
}

void refuse_over_cap(tcp::socket socket) {
  static const std::string kAnswer = over_cap_answer();
  beast::error_code ec;
  socket.non_blocking(true, ec);
  // What the client sent already is read first: closing a socket with unread
  // bytes sends a reset, which can destroy the 503 before the client reads it.
  std::array<char, 4096> sink{};
  for (int i = 0; i < 4 && !ec && socket.available(ec) > 0; ++i) socket.read_some(asio::buffer(sink), ec);
  ec.clear();
  socket.write_some(asio::buffer(kAnswer), ec);
  socket.shutdown(tcp::socket::shutdown_send, ec);
  socket.close(ec);
}

}  // namespace salttap
