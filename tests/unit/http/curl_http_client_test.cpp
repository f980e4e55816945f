// The libcurl client against real local HTTP servers, and its gzip.

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>

#include "common/text.h"
#include "http/curl_http_client.h"
#include "http/gzip.h"
#include "http/host_board.h"
#include "http/http_client.h"
#include "tests/support/gunzip.h"
#include "tests/support/http_receiver.h"
#include "tests/support/loopback_port.h"

namespace salttap::http {
namespace {

using namespace std::chrono_literals;
using salttap::testing::gunzip;
using salttap::testing::HttpReceiver;
using Reply = HttpReceiver::Reply;

// A port nothing listens on (bound, never listened: connection refused).
using DeadPort = salttap::testing::LoopbackPort;

bool has_header(const std::string& head, const std::string& line) {
  return (head + "\r\n").find("\r\n" + line + "\r\n") != std::string::npos;
}

http::HttpRequest bulk(std::string body) {
  http::HttpRequest r;
  r.method = "POST";
  r.path = "/_bulk?filter_path=errors";
  r.body = std::move(body);
  r.content_type = "application/x-ndjson";
  r.gzip = true;
  return r;
}

TEST(Gzip, RoundTripsAtEveryLevel) {
  std::string big;
  for (int i = 0; big.size() < (1u << 20); ++i) big += "{\"create\":{\"_id\":\"" + std::to_string(i * 7919) + "\"}}\n";
  // Random bytes do not compress: deflate falls back to stored blocks, the
  // output's worst case.
  std::string noise(3u << 20, '\0');
  std::uint64_t x = 88172645463325252ull;
  for (char& c : noise) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = static_cast<char>(x);
  }
  for (const std::string& input : {std::string(), std::string("x"), big, noise}) {
    for (int level : {0, 1, 2, 3, 6, 9, -5, 42}) {
      const std::string packed = gzip_compress(input, level);
      ASSERT_GE(packed.size(), 18u);
      EXPECT_EQ(static_cast<unsigned char>(packed[0]), 0x1f);
      EXPECT_EQ(static_cast<unsigned char>(packed[1]), 0x8b);
      EXPECT_EQ(gunzip(packed), input) << "level " << level << " size " << input.size();
    }
  }
  EXPECT_LT(gzip_compress(big, 1).size(), big.size() / 3);
}

TEST(CurlHttpClient, PostsGzippedNdjsonOnOneKeptAliveConnection) {
  HttpReceiver server(
      {Reply{200, R"({"errors":false})", {"X-Elastic-Product: Elasticsearch"}, {}}, Reply{201, "second", {}, {}}},
      /*keep_alive=*/true);
  http::HttpClientConfig config;
  config.hosts = {server.base_url()};
  auto client = http::make_curl_client(config);
  const std::string body = "{\"create\":{}}\n{\"n\":1}\n";
  const http::HttpResponse r1 = client->send(bulk(body));
  EXPECT_EQ(r1.status, 200);
  EXPECT_EQ(r1.body, R"({"errors":false})");
  EXPECT_EQ(r1.product, "Elasticsearch");
  EXPECT_EQ(r1.host, server.base_url());
  EXPECT_EQ(r1.error, "");
  const http::HttpResponse r2 = client->send(bulk(body));
  EXPECT_EQ(r2.status, 201);
  EXPECT_EQ(r2.product, "") << "headers of one response do not leak into the next";

  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(server.connections(), 1) << "the second request reused the connection";
  const auto& head = requests[0].head;
  EXPECT_EQ(head.substr(0, head.find("\r\n")), "POST /_bulk?filter_path=errors HTTP/1.1");
  EXPECT_TRUE(has_header(head, "Content-Type: application/x-ndjson")) << head;
  EXPECT_TRUE(has_header(head, "Content-Encoding: gzip")) << head;
  EXPECT_EQ(head.find("Expect:"), std::string::npos) << "no 100-continue round trip";
  EXPECT_EQ(gunzip(requests[0].body), body);
  EXPECT_EQ(r1.bytes_sent, requests[0].body.size());
}

TEST(CurlHttpClient, ARequestsOwnHeadersGoWithItAlone) {
  HttpReceiver server(std::vector<int>{200, 200}, true);
  http::HttpClientConfig config;
  config.hosts = {server.base_url()};
  config.headers = {"X-Everyone: 1"};
  auto client = http::make_curl_client(config);
  EXPECT_EQ(client->send({"POST", "/api/x", "a", "multipart/form-data; boundary=b", false, {"kbn-xsrf: true"}}).status,
            200);
  EXPECT_EQ(client->send({"GET", "/", "", "application/json", false, {}}).status, 200);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_TRUE(has_header(requests[0].head, "kbn-xsrf: true")) << requests[0].head;
  EXPECT_TRUE(has_header(requests[0].head, "X-Everyone: 1")) << requests[0].head;
  EXPECT_TRUE(has_header(requests[0].head, "Content-Type: multipart/form-data; boundary=b")) << requests[0].head;
  EXPECT_EQ(requests[1].head.find("kbn-xsrf"), std::string::npos) << "not on the next request";
  EXPECT_TRUE(has_header(requests[1].head, "X-Everyone: 1")) << requests[1].head;
}

TEST(CurlHttpClient, MethodsAndPlainBodies) {
  HttpReceiver server(std::vector<int>{200, 200, 200, 200}, true);
  http::HttpClientConfig config;
  config.hosts = {server.base_url() + "/"};  // a trailing slash is tolerated
  auto client = http::make_curl_client(config);
  EXPECT_EQ(client->send({"GET", "/", "", "application/json", false, {}}).status, 200);
  EXPECT_EQ(client->send({"PUT", "/_index_template/x", R"({"a":1})", "application/json", false, {}}).status, 200);
  EXPECT_EQ(client->send({"DELETE", "/idx", "", "application/json", false, {}}).status, 200);
  EXPECT_EQ(client->send({"HEAD", "/idx", "", "application/json", false, {}}).status, 200);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0].head.substr(0, 14), "GET / HTTP/1.1");
  EXPECT_EQ(requests[1].head.substr(0, 29), "PUT /_index_template/x HTTP/1");
  EXPECT_EQ(requests[1].body, R"({"a":1})");
  EXPECT_EQ(requests[1].head.find("Content-Encoding"), std::string::npos);
  EXPECT_EQ(requests[2].head.substr(0, 16), "DELETE /idx HTTP");
  EXPECT_EQ(requests[3].head.substr(0, 14), "HEAD /idx HTTP");
}

TEST(CurlHttpClient, FailsOverOnNoResponseToTheNextHostAndSticksToIt) {
  DeadPort dead;
  HttpReceiver live(std::vector<int>{200, 200}, true);
  http::HttpClientConfig config;
  config.hosts = {"127.0.0.1:" + std::to_string(dead.port()),
                  "127.0.0.1:" + std::to_string(live.port())};  // no scheme: http
  auto client = http::make_curl_client(config);
  ::testing::internal::CaptureStderr();
  const http::HttpResponse r1 = client->send(bulk("{}\n{}\n"));
  const http::HttpResponse r2 = client->send(bulk("{}\n{}\n"));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r1.status, 200);
  EXPECT_EQ(r1.host, live.base_url());
  EXPECT_EQ(r2.status, 200);
  EXPECT_EQ(live.requests().size(), 2u);
  EXPECT_NE(log.find(dead.url()), std::string::npos) << log;
  EXPECT_EQ(log.find(dead.url()), log.rfind(dead.url())) << "the dead host was tried once: " << log;
}

TEST(CurlHttpClient, A503HostCoolsDownWhileAnotherIsUp) {
  HttpReceiver busy(std::vector<int>{503, 503, 503});
  HttpReceiver live(std::vector<int>{200, 200, 200});
  http::HttpClientConfig config;
  config.hosts = {busy.base_url(), live.base_url()};
  config.host_cooldown = 60s;
  auto client = http::make_curl_client(config);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(client->send({"GET", "/", "", "application/json", false, {}}).status, 200);
  EXPECT_EQ(busy.requests().size(), 1u);
  EXPECT_EQ(live.requests().size(), 3u);
}

TEST(CurlHttpClient, EveryHostDownReturnsTheLastFailure) {
  DeadPort a, b;
  http::HttpClientConfig config;
  config.hosts = {a.url(), b.url()};
  auto client = http::make_curl_client(config);
  ::testing::internal::CaptureStderr();
  const http::HttpResponse r = client->send({"GET", "/", "", "application/json", false, {}});
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.host, b.url());
  EXPECT_NE(r.error.find(b.url()), std::string::npos) << r.error;
  // both in cooldown: still tried (soonest first) rather than failing without trying
  const http::HttpResponse again = client->send({"GET", "/", "", "application/json", false, {}});
  EXPECT_EQ(again.status, 0);
}

TEST(CurlHttpClient, BasicAuthIsSentButCredentialsStayOutOfErrorsAndLogs) {
  HttpReceiver server(std::vector<int>{200});
  http::HttpClientConfig config;
  config.hosts = {server.base_url()};
  config.auth.username = "elastic";
  config.auth.password = "s3cr3t-Pa55";
  EXPECT_EQ(http::make_curl_client(config)->send({"GET", "/", "", "application/json", false, {}}).status, 200);
  const auto head = server.requests().at(0).head;
  EXPECT_TRUE(has_header(head, "Authorization: Basic " + base64_encode("elastic:s3cr3t-Pa55"))) << head;

  DeadPort dead;
  config.hosts = {"http://elastic:url-Secret9@127.0.0.1:" + std::to_string(dead.port()), dead.url() + "/"};
  ::testing::internal::CaptureStderr();
  const http::HttpResponse r = http::make_curl_client(config)->send(bulk("{}\n{}\n"));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(log.empty());
  for (const std::string& text : {r.error, r.host, log}) {
    EXPECT_EQ(text.find("s3cr3t-Pa55"), std::string::npos) << text;
    EXPECT_EQ(text.find("url-Secret9"), std::string::npos) << text;
  }
}

TEST(CurlHttpClient, ApiKeyGoesInTheAuthorizationHeader) {
  HttpReceiver server(std::vector<int>{200});
  http::HttpClientConfig config;
  config.hosts = {server.base_url()};
  config.auth.api_key = "VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==";
  http::make_curl_client(config)->send({"GET", "/", "", "application/json", false, {}});
  EXPECT_TRUE(has_header(server.requests().at(0).head, "Authorization: ApiKey " + config.auth.api_key));
}

TEST(CurlHttpClient, RequestTimeoutIsNoResponse) {
  HttpReceiver silent({Reply{200, "late", {}, /*hold=*/true}});  // only the client's timeout ends the request
  http::HttpClientConfig config;
  config.hosts = {silent.base_url()};
  config.request_timeout = 200ms;
  const http::HttpResponse r = http::make_curl_client(config)->send({"GET", "/", "", "application/json", false, {}});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.error.find("timed out"), std::string::npos) << r.error;
}

TEST(CurlHttpClient, AbortEndsARequestInProgress) {
  HttpReceiver silent({Reply{200, "late", {}, /*hold=*/true}});  // only abort() ends the request
  http::HttpClientConfig config;
  config.hosts = {silent.base_url()};
  config.request_timeout = 1h;  // rather than the timeout
  auto client = http::make_curl_client(config);
  std::thread aborter([&] {
    if (silent.wait_requests(1)) client->abort();  // the request is in progress
  });
  const http::HttpResponse r = client->send({"GET", "/", "", "application/json", false, {}});
  aborter.join();
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.error.find("aborted"), std::string::npos) << r.error;
  EXPECT_EQ(client->send({"GET", "/", "", "application/json", false, {}}).status, 0) << "aborted for good";
}

TEST(CurlHttpClient, OversizedResponseIsCutOffAndReported) {
  HttpReceiver server({Reply{200, std::string(5000, 'x'), {}, {}}});
  http::HttpClientConfig config;
  config.hosts = {server.base_url()};
  config.max_response_bytes = 1000;
  const http::HttpResponse r = http::make_curl_client(config)->send({"GET", "/", "", "application/json", false, {}});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.error.find("larger than 1000 bytes"), std::string::npos) << r.error;
}

// Accepts one connection and answers whatever comes with plain HTTP: a TLS
// client sees no TLS server there.
struct PlainTextListener {
  salttap::testing::LoopbackPort socket;
  std::thread thread;
  PlainTextListener() {
    ::listen(socket.fd(), 1);
    thread = std::thread([this] {
      const int c = ::accept(socket.fd(), nullptr, nullptr);
      if (c < 0) return;
      constexpr std::string_view kAnswer = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
      (void)!::write(c, kAnswer.data(), kAnswer.size());
      ::shutdown(c, SHUT_WR);
      char sink[4096];
      while (::read(c, sink, sizeof sink) > 0) {
      }
      ::close(c);
    });
  }
  ~PlainTextListener() {
    ::shutdown(socket.fd(), SHUT_RDWR);
    thread.join();
  }
};

TEST(CurlHttpClient, AFailedTlsHandshakeIsNoResponseMarkedAsTls) {
  PlainTextListener plain;
  http::HttpClientConfig config;
  config.hosts = {"https://127.0.0.1:" + std::to_string(plain.socket.port())};
  config.auth.username = "elastic";
  config.auth.password = "tls-Secret7";
  const http::HttpResponse r = http::make_curl_client(config)->send({"GET", "/", "", "application/json", false, {}});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.tls_failed);
  EXPECT_NE(r.error.find("https://127.0.0.1:" + std::to_string(plain.socket.port()) + ": TLS failed: "),
            std::string::npos)
      << r.error;
  EXPECT_EQ(r.error.find("tls-Secret7"), std::string::npos) << r.error;

  DeadPort dead;  // refused before any TLS: not a TLS failure
  config.hosts = {"https://127.0.0.1:" + std::to_string(dead.port())};
  const http::HttpResponse refused =
      http::make_curl_client(config)->send({"GET", "/", "", "application/json", false, {}});
  EXPECT_EQ(refused.status, 0);
  EXPECT_FALSE(refused.tls_failed) << refused.error;
  EXPECT_EQ(refused.error.find("TLS"), std::string::npos) << refused.error;
}

// Round robin: each request starts at the next host; every host keeps its one
// connection alive (libcurl's cache holds one per host).
TEST(CurlHttpClient, RoundRobinSpreadsRequestsOverTheHostsOnOneKeptAliveConnectionEach) {
  HttpReceiver a(std::vector<int>(4, 200), true), b(std::vector<int>(4, 200), true), c(std::vector<int>(4, 200), true);
  http::HttpClientConfig config;
  config.hosts = {a.base_url(), b.base_url(), c.base_url()};
  config.round_robin = true;
  config.board = std::make_shared<HostBoard>(host_displays(config.hosts));
  auto client = http::make_curl_client(config);
  std::vector<std::string> answered;
  for (int i = 0; i < 9; ++i) answered.push_back(client->send(bulk("{}\n{}\n")).host);
  EXPECT_EQ(answered, (std::vector<std::string>{a.base_url(), b.base_url(), c.base_url(), a.base_url(), b.base_url(),
                                                c.base_url(), a.base_url(), b.base_url(), c.base_url()}));
  for (const HttpReceiver* r : {&a, &b, &c}) {
    EXPECT_EQ(r->requests().size(), 3u);
    EXPECT_EQ(r->connections(), 1) << r->base_url() << ": keep-alive per host";
  }
  const auto hosts = config.board->snapshot();
  ASSERT_EQ(hosts.size(), 3u);
  for (const auto& h : hosts) {
    EXPECT_TRUE(h.seen && h.up) << h.host;
    EXPECT_EQ(h.answered, 3u) << h.host;
    EXPECT_EQ(h.failed, 0u) << h.host;
  }
  EXPECT_EQ(config.board->up(), 3u);
}

TEST(CurlHttpClient, WithoutRoundRobinRequestsStayWithTheHostThatAnswered) {
  HttpReceiver a(std::vector<int>(3, 200), true), b(std::vector<int>(3, 200), true);
  http::HttpClientConfig config;
  config.hosts = {a.base_url(), b.base_url()};
  auto client = http::make_curl_client(config);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(client->send(bulk("{}\n{}\n")).host, a.base_url());
  EXPECT_TRUE(b.requests().empty());
}

// A node that dies with the request in flight: it takes the connection and
// the request, then closes without an answer (a kill -9).
struct DyingNode {
  salttap::testing::LoopbackPort socket;
  std::thread thread;
  std::atomic<int> taken{0};
  DyingNode() {
    ::listen(socket.fd(), 4);
    thread = std::thread([this] {
      while (true) {
        const int c = ::accept(socket.fd(), nullptr, nullptr);
        if (c < 0) return;
        char head[4096];
        (void)!::read(c, head, sizeof head);  // some of the request, then gone
        ++taken;
        ::close(c);
      }
    });
  }
  ~DyingNode() {
    ::shutdown(socket.fd(), SHUT_RDWR);
    thread.join();
  }
};

TEST(CurlHttpClient, ABatchInFlightOnADyingNodeIsSentAgainToTheNextAndTheNodeSkipped) {
  DyingNode dying;
  HttpReceiver a(std::vector<int>(4, 200), true), b(std::vector<int>(4, 200), true);
  http::HttpClientConfig config;
  config.hosts = {dying.socket.url(), a.base_url(), b.base_url()};
  config.round_robin = true;
  config.host_cooldown = 60s;
  config.board = std::make_shared<HostBoard>(host_displays(config.hosts));
  // Two clients on one board (two shipper workers): what one learns, the other skips.
  auto first = http::make_curl_client(config);
  auto second = http::make_curl_client(config);
  ::testing::internal::CaptureStderr();
  const http::HttpResponse r = first->send(bulk("{\"create\":{\"_id\":\"x\"}}\n{}\n"));
  std::vector<std::string> later;
  for (int i = 0; i < 4; ++i) later.push_back((i % 2 ? first : second)->send(bulk("{}\n{}\n")).host);
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.host, a.base_url()) << "the same batch, on the next host";
  EXPECT_EQ(dying.taken.load(), 1) << "the dying node got the batch once, and nothing after";
  ASSERT_EQ(a.requests().size() + b.requests().size(), 5u);
  EXPECT_EQ(gunzip(a.requests()[0].body), "{\"create\":{\"_id\":\"x\"}}\n{}\n");
  for (const auto& host : later) EXPECT_NE(host, dying.socket.url());
  EXPECT_GE(b.requests().size(), 2u) << "the live hosts share the rest";
  const auto hosts = config.board->snapshot();
  EXPECT_FALSE(hosts[0].up);
  EXPECT_EQ(hosts[0].failed, 1u);
  EXPECT_TRUE(hosts[1].up && hosts[2].up);
  EXPECT_EQ(config.board->up(), 2u);
}

TEST(CurlHttpClient, A503IsTheAnswerWhenTheRequestSaysSo) {
  HttpReceiver a(std::vector<int>{503, 503}), b(std::vector<int>{200});
  http::HttpClientConfig config;
  config.hosts = {a.base_url(), b.base_url()};
  config.board = std::make_shared<HostBoard>(host_displays(config.hosts));
  auto client = http::make_curl_client(config);
  http::HttpRequest health{"GET", "/_cluster/health", "", "application/json", false, {}};
  health.failover_on_unavailable = false;
  const http::HttpResponse r = client->send(health);
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.host, a.base_url());
  EXPECT_TRUE(b.requests().empty());
  EXPECT_TRUE(config.board->snapshot()[0].up) << "the host answered";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(client->send({"GET", "/", "", "application/json", false, {}}).status, 200) << "a plain request fails over";
  ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(config.board->snapshot()[0].up);
}

TEST(HostBoard, SpreadOrderTurnsOverTheHealthyHostsAndPutsCoolingHostsLast) {
  HostBoard board(host_displays({"es1:9200/", "https://u:p@es2:9200", "http://es3:9200"}));
  EXPECT_EQ(board.snapshot()[0].host, "http://es1:9200");
  EXPECT_EQ(board.snapshot()[1].host, "https://es2:9200") << "no user info";
  const auto now = HostBoard::Clock::now();
  EXPECT_EQ(board.spread_order(now), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(board.spread_order(now), (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(board.spread_order(now), (std::vector<std::size_t>{2, 0, 1}));
  board.failed(2, now + 10s);
  board.failed(1, now + 5s);
  EXPECT_EQ(board.spread_order(now), (std::vector<std::size_t>{0, 1, 2})) << "cooling hosts last, soonest first";
  board.failed(1, now);  // a later failure never shortens a cooldown
  EXPECT_EQ(board.order(1, now), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(board.order(1, now + 6s), (std::vector<std::size_t>{1, 0, 2})) << "host 1 cooled down";
  board.answered(2);
  EXPECT_EQ(board.order(2, now), (std::vector<std::size_t>{2, 0, 1})) << "an answer ends the cooldown";
  // Two healthy hosts of three: each gets every other turn.
  std::vector<std::size_t> firsts;
  for (int i = 0; i < 4; ++i) firsts.push_back(board.spread_order(now).front());
  std::sort(firsts.begin(), firsts.end());
  EXPECT_EQ(firsts, (std::vector<std::size_t>{0, 0, 2, 2}));
  EXPECT_EQ(board.up(), 1u) << "host 0 was never tried";
}

}  // namespace
}  // namespace salttap::http
