// The HTTP listener against hostile clients, in-process: the file-handle
// budget, the header timeout, the connection cap answered 503, 414 / 431,
// GET/HEAD only with the security headers on /metrics and /healthz; and log
// lines that escape what a request could smuggle in.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "common/listener_limits.h"
#include "common/log.h"
#include "common/metrics_server.h"

namespace salttap {
namespace {

TEST(FdBudget, TheReserveFirstThenHalfOfTheRest) {
  EXPECT_EQ(fd_budget(1024), (1024 - kReservedFileHandles - kListenerOwnHandles) / 2);
  EXPECT_EQ(fd_budget(kReservedFileHandles), 0u);
  std::string warning;
  ListenerLimits l;
  l.max_connections = 5000;
  const auto fitted = fit_to_fd_budget(l, 1024, warning);
  ASSERT_TRUE(fitted);
  EXPECT_EQ(fitted->max_connections, fd_budget(1024));
  EXPECT_NE(warning.find("lowered"), std::string::npos);
  l.max_connections = 10;
  EXPECT_EQ(fit_to_fd_budget(l, 1024, warning)->max_connections, 10u);
  EXPECT_TRUE(warning.empty());
  EXPECT_FALSE(fit_to_fd_budget(l, 200, warning)) << "no room at all: refused";
  EXPECT_NE(warning.find("RLIMIT_NOFILE"), std::string::npos);
}

// A raw client: what the server sends until it closes (or `deadline`).
class Client {
 public:
  explicit Client(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    timeval tv{30, 0};  // a hang guard, not a measure
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~Client() { ::close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  void send(const std::string& s) { ASSERT_EQ(::send(fd_, s.data(), s.size(), MSG_NOSIGNAL), ssize_t(s.size())); }
  // Everything until the server closes; "<timeout>" appended when it did not within the guard.
  std::string until_closed() {
    std::string got;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        got.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) got += "<timeout>";
      return got;
    }
  }

 private:
  int fd_;
};

TEST(Listener, ClosesAConnectionThatNeverFinishesItsHeader) {
  Metrics m;
  ListenerLimits l;
  l.header_timeout = std::chrono::milliseconds(200);
  MetricsServer server(
      "127.0.0.1:0", m, [] { return true; }, {}, l);
  Client c(server.port());
  c.send("GET /metrics HTTP/1.1\r\nHost: x\r\n");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(c.until_closed(), "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  Client ok(server.port());
  ok.send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(ok.until_closed().find("salttap_listener_timeouts_total{phase=\"header\"} 1\n"), std::string::npos);
}

TEST(Listener, TheConnectionBeyondTheCapIsAnswered503) {
  Metrics m;
  ListenerLimits l;
  l.max_connections = 2;
  MetricsServer server(
      "127.0.0.1:0", m, [] { return true; }, {}, l);
  Client a(server.port()), b(server.port());
  a.send("GET");  // both held: their headers are not whole
  b.send("GET");
  Client c(server.port());
  // a and b may not be accepted yet when c connects; c's answer is 503 only once both are held, so retry.
  std::string got = c.until_closed();
  for (int i = 0; i < 100 && got.find(" 503 ") == std::string::npos; ++i) got = Client(server.port()).until_closed();
  EXPECT_TRUE(got.starts_with("HTTP/1.1 503 Service Unavailable\r\n")) << got;
  EXPECT_NE(got.find("X-Content-Type-Options: nosniff"), std::string::npos) << got;
}

TEST(Listener, OversizedRequestsAre414Or431) {
  Metrics m;
  MetricsServer server("127.0.0.1:0", m);
  Client target(server.port());
  target.send("GET /metrics?" + std::string(20000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(target.until_closed().starts_with("HTTP/1.1 414 "));
  Client header(server.port());
  header.send("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n");
  EXPECT_TRUE(header.until_closed().starts_with("HTTP/1.1 431 "));
}

TEST(Listener, MetricsAndHealthzAnswerGetAndHeadOnlyWithTheSecurityHeaders) {
  Metrics m;
  MetricsServer server("127.0.0.1:0", m);
  for (const char* path : {"/metrics", "/healthz"}) {
    for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "TRACE"}) {
      Client c(server.port());
      c.send(std::string(method) + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      const std::string got = c.until_closed();
      EXPECT_TRUE(got.starts_with("HTTP/1.1 405 ")) << method << " " << path << ": " << got;
      EXPECT_NE(got.find("Allow: GET, HEAD"), std::string::npos) << got;
    }
    Client head(server.port());
    head.send(std::string("HEAD ") + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const std::string got = head.until_closed();
    EXPECT_TRUE(got.starts_with("HTTP/1.1 200 ")) << got;
    for (const char* h : {"Content-Security-Policy: default-src 'none'", "X-Content-Type-Options: nosniff",
                          "X-Frame-Options: DENY", "Referrer-Policy: no-referrer"})
      EXPECT_NE(got.find(h), std::string::npos) << h;
  }
}

TEST(LogEscaping, ANewlineNeverStartsALine) {
  using log::Format;
  const auto t = std::chrono::system_clock::time_point{};
  for (const Format f : {Format::plain, Format::journal, Format::json}) {
    const std::string line =
        log::format_line(f, log::Level::error, t, "http: GET /ui/a\nFAKE ERROR\r\x1b[2J\xc2\x85x\xe2\x80\xa8y");
    EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
    EXPECT_EQ(line.find_first_of("\r\x1b"), std::string::npos) << line;
    if (f == Format::json) continue;  // JSON readers split on the escaped newline only
    EXPECT_EQ(line.find("\xc2\x85"), std::string::npos) << line;
    EXPECT_EQ(line.find("\xe2\x80\xa8"), std::string::npos) << line;
  }
  EXPECT_NE(log::format_line(Format::plain, log::Level::info, t, "a\nb").find("a\\nb"), std::string::npos);
}

}  // namespace
}  // namespace salttap
