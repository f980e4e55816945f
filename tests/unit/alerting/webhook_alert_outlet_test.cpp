// The webhook outlet: what goes on the wire (through http::HttpClient),
// what counts as delivered, and one delivery to a real HTTP server on
// loopback through libcurl.

#include <gtest/gtest.h>

#include <future>

#include "alerting/webhook_alert_outlet.h"
#include "http/curl_http_client.h"
#include "tests/support/fake_http.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/http_receiver.h"

namespace salttap::alerting {
namespace {

using namespace std::chrono_literals;
using correlator::Alert;
using correlator::AlertKind;
using salttap::testing::FakeHttp;
using salttap::testing::FakeSteadyTime;

const Alert kAlert{AlertKind::failed, {AlertKind::failed}, "123", R"({"alert":"failed","jid":"123"})", 0, 0};

TEST(WebhookConfig, TheUrlSplitsIntoTheClientsHostAndTheRequestPath) {
  WebhookConfig config;
  config.url = "https://user:pw@hooks.example:8443/salt/alerts?token=x";
  config.timeout = 3s;
  config.headers = {"Authorization: Bearer t0ken"};
  config.tls.ca_file = "/etc/ssl/hooks.pem";
  const http::HttpClientConfig http = webhook_http_config(config);
  EXPECT_EQ(http.hosts, std::vector<std::string>{"https://user:pw@hooks.example:8443"});
  EXPECT_EQ(http.headers, config.headers);
  EXPECT_EQ(http.tls.ca_file, "/etc/ssl/hooks.pem");
  EXPECT_TRUE(http.tls.verify);
  EXPECT_EQ(http.connect_timeout, 3s);
  EXPECT_EQ(http.request_timeout, 3s);
  EXPECT_EQ(webhook_path(config.url), "/salt/alerts?token=x");
  EXPECT_EQ(webhook_path("http://hooks.example"), "/");
  EXPECT_EQ(webhook_path("http://hooks.example?x=1"), "/?x=1");
  EXPECT_EQ(webhook_path("http://hooks.example/a#frag"), "/a");
}

TEST(WebhookAlertOutlet, PostsThePayloadToTheUrlsPath) {
  FakeSteadyTime time;
  FakeHttp receiver;
  WebhookConfig config;
  config.url = "http://hooks.example/salt";
  WebhookAlertOutlet outlet(config, receiver.client(), time);
  outlet.send(kAlert);
  outlet.stop(1h);  // drains
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/salt");
  EXPECT_EQ(requests[0].content_type, "application/json");
  EXPECT_EQ(requests[0].body, kAlert.json);
  EXPECT_EQ(outlet.stats().delivered.load(), 1u);
}

TEST(WebhookAlertOutlet, Non2xxAndTransportErrorsAreRetried) {
  FakeSteadyTime time;
  std::vector<long> statuses = {500, 0, 302, 204};
  FakeHttp receiver([&](const http::HttpRequest&) {
    const long status = statuses.front();
    statuses.erase(statuses.begin());
    return FakeHttp::reply(status);
  });
  WebhookConfig config;
  config.url = "http://hooks.example/salt";
  WebhookAlertOutlet outlet(config, receiver.client(), time, [] { return 0.5; });
  outlet.send(kAlert);
  for (std::size_t failed = 1; failed <= 3; ++failed) {
    receiver.await_requests(failed);
    time.await_waiters(1);
    time.advance_to_next_deadline();
  }
  receiver.await_requests(4);
  outlet.stop(1h);
  EXPECT_EQ(outlet.stats().attempts.load(), 4u);
  EXPECT_EQ(outlet.stats().retries.load(), 3u);
  EXPECT_EQ(outlet.stats().delivered.load(), 1u);
}

TEST(WebhookAlertOutlet, StopInterruptsAHangingRequestAtItsDeadline) {
  FakeSteadyTime time;
  FakeHttp receiver;
  receiver.hold();  // the receiver never answers
  WebhookConfig config;
  config.url = "http://hooks.example/salt";
  WebhookAlertOutlet outlet(config, receiver.client(), time);
  outlet.send(kAlert);
  receiver.await_requests(1);
  auto stopped = std::async(std::launch::async, [&] { outlet.stop(5s); });
  time.await_waiters(1);
  time.advance(5s);  // the client is aborted: the request returns
  ASSERT_EQ(stopped.wait_for(60s), std::future_status::ready);
  EXPECT_EQ(outlet.stats().gave_up.load(), 1u);
  EXPECT_EQ(receiver.requests().size(), 1u);
}

// Through libcurl to a real server on 127.0.0.1: refused once (500), then taken.
TEST(WebhookAlertOutlet, DeliversToARealReceiverAfterARetry) {
  salttap::testing::HttpReceiver receiver({500, 200});
  WebhookConfig config;
  config.url = receiver.url();
  config.headers = {"X-Source: salttap"};
  config.retry.backoff = {1ms, 1ms};
  WebhookAlertOutlet outlet(config, http::make_curl_client(webhook_http_config(config)));
  outlet.send(kAlert);
  outlet.stop(1h);  // returns once the queue is drained
  EXPECT_EQ(outlet.stats().delivered.load(), 1u);
  EXPECT_EQ(outlet.stats().attempts.load(), 2u);
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].body, kAlert.json);
  EXPECT_EQ(requests[1].head.rfind("POST /hook HTTP/1.1\r\n", 0), 0u) << requests[1].head;
  EXPECT_NE(requests[1].head.find("Content-Type: application/json"), std::string::npos) << requests[1].head;
  EXPECT_NE(requests[1].head.find("X-Source: salttap"), std::string::npos) << requests[1].head;
}

}  // namespace
}  // namespace salttap::alerting
