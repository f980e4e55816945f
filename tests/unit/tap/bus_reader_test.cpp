// The live readers against real sockets: Unix stream, TCP loopback and
// ZeroMQ PUB (Salt 2015.x), with master restarts and a stalled consumer.
// Real time only paces the sockets: every test waits for an observable state
// (events, stats counters, an accepted connection) under a one-minute guard,
// and asserts nothing about how long anything took.

#include <gtest/gtest.h>

#include <zmq.hpp>

#include <future>

#include "tap/event_source.h"
#include "tests/support/bus_reader_fixtures.h"
#include "tests/support/captures.h"
#include "tests/support/fake_publisher.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/msgpack_builders.h"

namespace salttap::tap {
namespace {

using namespace salttap::testing;
using namespace std::chrono_literals;

// True once `f` is ready, within the guard.
bool finishes(std::future<void>& f) { return f.wait_for(kReaderGuard) == std::future_status::ready; }

ReaderOptions fast(Endpoint e) {
  ReaderOptions o;
  o.endpoint = std::move(e);
  o.backoff_initial = 10ms;
  o.backoff_max = 100ms;
  return o;
}

TEST(StreamBusReader, ReadsACapturedStreamFromAUnixSocket) {
  TempDir dir;
  FakePublisher pub((dir.path() / "master_event_pub.ipc").string());
  EventQueue queue;
  auto reader = subscribed_reader(pub, fast(Endpoint::unix_socket(pub.path())), queue);
  pub.publish(read_file(captures_dir() / "salt-3006.26" / "test_ping.raw"));
  const auto tags = pop_tags(queue, 4);
  ASSERT_EQ(tags.size(), 4u);
  EXPECT_TRUE(tags[1].ends_with("/new"));
  EXPECT_EQ(reader->stats().framing.load(), Framing::len32);
  EXPECT_EQ(reader->era(), "3006.26+ (length-prefixed pub)");
  reader->stop();
}

TEST(StreamBusReader, ReconnectsAfterAMasterRestartAndKeepsReading) {
  TempDir dir;
  FakePublisher pub((dir.path() / "master_event_pub.ipc").string());
  EventQueue queue;
  auto reader = subscribed_reader(pub, fast(Endpoint::unix_socket(pub.path())), queue);
  const std::string f = frame(simple_body("before"));
  pub.publish(f + f.substr(0, 10));  // the restart tears a frame
  EXPECT_EQ(pop_tags(queue, 1), std::vector<std::string>{"before"});

  pub.close_all();  // master down: the reader retries against a missing socket
  EXPECT_TRUE(eventually([&] { return reader->stats().connect_failures > 0; }));
  pub.restart();
  pub.wait_for_subscribers(1);
  pub.publish(len32(frame(simple_body("after"))));  // and the new master is 3006.26
  EXPECT_EQ(pop_tags(queue, 1), std::vector<std::string>{"after"});
  EXPECT_EQ(reader->stats().connects.load(), 2u);
  EXPECT_EQ(reader->stats().disconnects.load(), 1u);
  EXPECT_EQ(reader->stats().truncated_frames.load(), 1u);
  reader->stop();
}

TEST(StreamBusReader, ReadsTcpIpcMode) {
  FakePublisher pub;  // TCP on 127.0.0.1
  EventQueue queue;
  auto reader = subscribed_reader(pub, fast(Endpoint::tcp("127.0.0.1", pub.port())), queue);
  pub.publish(read_file(captures_dir() / "salt-3006.25" / "test_ping.raw"));
  EXPECT_EQ(pop_tags(queue, 4).size(), 4u);
  EXPECT_EQ(reader->stats().framing.load(), Framing::plain);
  reader->stop();
}

TEST(StreamBusReader, AStalledConsumerCostsDroppedEventsNotAStalledReader) {
  TempDir dir;
  FakePublisher pub((dir.path() / "pub.ipc").string());
  QueueLimits limits;
  limits.max_events = 100;
  EventQueue queue(limits);  // nobody pops it
  auto reader = subscribed_reader(pub, fast(Endpoint::unix_socket(pub.path())), queue);
  std::string many;
  for (int i = 0; i < 5000; ++i) many += frame(simple_body("e/" + std::to_string(i)));
  pub.publish(many);  // would block in send() if the reader stopped reading
  EXPECT_TRUE(eventually([&] { return reader->stats().events == 5000; }));
  EXPECT_EQ(reader->stats().queue_drops.load(), 4900u);
  EXPECT_EQ(queue.stats().dropped, 4900u);
  EXPECT_EQ(pop_tags(queue, 100).size(), 100u);
  reader->stop();
}

TEST(StreamBusReader, StopIsPromptWhileTheMasterIsDown) {
  EventQueue queue;
  auto options = fast(Endpoint::unix_socket("/nonexistent/salttap/pub.ipc"));
  options.backoff_initial = options.backoff_max = 24h;
  options.unit_random = [] { return 0.999999; };  // the retry is a day away
  auto reader = make_event_source(options, queue);
  reader->start();
  ASSERT_TRUE(eventually([&] { return reader->stats().connect_failures == 1; }));
  auto stopped = std::async(std::launch::async, [&] { reader->stop(); });
  EXPECT_TRUE(finishes(stopped)) << "stop() waits for the reconnect timer";
  EXPECT_EQ(reader->stats().connect_failures.load(), 1u);
}

TEST(ZmqBusReader, ReadsSalt2015EventsFromARealZeroMqPublisher) {
  TempDir dir;
  const std::string endpoint = "ipc://" + (dir.path() / "master_event_pub.ipc").string();
  zmq::context_t ctx(1);
  zmq::socket_t pub(ctx, zmq::socket_type::pub);
  pub.bind(endpoint);
  EventQueue queue;
  auto reader = make_event_source(fast(Endpoint::zmq(endpoint)), queue);
  reader->start();

  // Era B: one message = one raw event body, strings as msgpack raw (str).
  const std::string ret = body("salt/job/20151201120000123456/ret/web1", 3, [](Packer& pk) {
    pk.pack(std::string_view("id"));
    pk.pack(std::string_view("web1"));
    pk.pack(std::string_view("return"));
    pk.pack(true);
    pk.pack(std::string_view("_stamp"));
    pk.pack(std::string_view("2015-12-01T12:00:00.123456"));
  });
  // ZeroMQ drops messages sent before the subscription is live (slow joiner):
  // publish until the first one arrives, then one marked message.
  std::vector<std::string> tags;
  const auto deadline = std::chrono::steady_clock::now() + kReaderGuard;
  while (tags.empty() && std::chrono::steady_clock::now() < deadline) {
    pub.send(zmq::buffer(ret), zmq::send_flags::none);
    tags = pop_tags(queue, 1, 50ms);
  }
  ASSERT_FALSE(tags.empty());
  EXPECT_EQ(tags[0], "salt/job/20151201120000123456/ret/web1");
  pub.send(zmq::buffer(std::string("garbage without separator")), zmq::send_flags::none);
  pub.send(zmq::buffer(simple_body("last")), zmq::send_flags::none);
  std::vector<std::string> rest;
  const auto d2 = std::chrono::steady_clock::now() + kReaderGuard;
  while ((rest.empty() || rest.back() != "last") && std::chrono::steady_clock::now() < d2)
    for (auto& t : pop_tags(queue, 1, 50ms)) rest.push_back(t);
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(rest.back(), "last");
  EXPECT_EQ(reader->stats().decode_errors.load(), 1u);
  EXPECT_EQ(reader->era(), "2015.5-2015.8 (ZeroMQ bus)");
  reader->stop();
}

TEST(ZmqBusReader, AFailingSocketIsRetriedOnTheBackoffAndStopWakesItsSleep) {
  FakeSteadyTime time;
  ReaderOptions options;
  options.endpoint = Endpoint::zmq("nonsense://salttap");  // libzmq refuses the transport: every try fails
  options.backoff_initial = 1s;
  options.backoff_max = 4s;
  options.unit_random = [] { return 0.999999; };  // the top of each jitter range
  options.steady_time = &time;
  EventQueue queue;
  auto reader = make_event_source(options, queue);
  const auto start = time.now();
  ::testing::internal::CaptureStderr();
  reader->start();
  time.advance_until([&] { return reader->stats().connect_failures == 4; });
  EXPECT_EQ(time.now() - start, 7s) << "1 s, 2 s and 4 s between the four tries";
  time.await_waiters(1);  // asleep before the fifth
  auto stopped = std::async(std::launch::async, [&] { reader->stop(); });
  const bool prompt = finishes(stopped);
  if (!prompt) time.advance(24h);  // let the broken stop() end
  ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(prompt) << "stop() waits out the reconnect sleep";
  EXPECT_EQ(time.now() - start, 7s);
  EXPECT_EQ(reader->stats().connects.load(), 0u);
  EXPECT_FALSE(reader->stats().connected.load());
}

}  // namespace
}  // namespace salttap::tap
