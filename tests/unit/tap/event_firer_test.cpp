// Firing into the pull socket: the frames Salt expects, the tag fence, and
// the probe for the framing the pull socket wants.

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <future>

#include "tap/event_firer.h"
#include "tap/internal/stream_decoder.h"
#include "tap/pull_framing_probe.h"
#include "tests/support/fake_publisher.h"
#include "tests/support/fake_steady_time.h"

namespace salttap::tap {
namespace {

using salttap::testing::TempDir;

msgpack::object_handle map_of(const std::map<std::string, std::string>& m) {
  msgpack::sbuffer b;
  msgpack::pack(b, m);
  return msgpack::unpack(b.data(), b.size());
}

std::vector<Event> decode_all(const std::string& bytes) {
  StreamDecoder d;
  std::vector<Event> out;
  d.feed(bytes, [&](Event&& e) { out.push_back(std::move(e)); });
  return out;
}

TEST(EventFirer, EncodesFramesTheMasterAccepts) {
  const auto data = map_of({{"k", "v"}});
  for (Framing f : {Framing::plain, Framing::len32}) {
    const std::string frame = encode_pull_frame("salttap/alert/x", data.get(), f);
    EXPECT_EQ(frame[0] == '\0', f == Framing::len32);
    const auto events = decode_all(frame + frame);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].tag(), "salttap/alert/x");
    EXPECT_EQ(*events[0].string_field("k"), "v");
    ASSERT_TRUE(events[0].string_field("_stamp"));
    EXPECT_EQ(events[0].string_field("_stamp")->size(), 26u);  // 2026-11-29T19:04:50.452295
  }
}

TEST(EventFirer, KeepsAGivenStamp) {
  const auto data = map_of({{"_stamp", "2026-01-01T00:00:00.000001"}});
  const auto events = decode_all(encode_pull_frame("salttap/x", data.get(), Framing::plain));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data().via.map.size, 1u);
  EXPECT_EQ(*events[0].string_field("_stamp"), "2026-01-01T00:00:00.000001");
}

TEST(EventFirer, RefusesTagsOutsideItsPrefix) {
  EventFirer firer(Endpoint::unix_socket("/nonexistent"));
  const auto data = map_of({});
  EXPECT_THROW(firer.fire("salt/job/1/publish", data.get(), Framing::plain), FireError);
  EXPECT_THROW(firer.fire("salttapx/y", data.get(), Framing::plain), FireError);
}

TEST(EventFirer, WritesToTheSocketAndReportsFailure) {
  TempDir dir;
  const std::string path = (dir.path() / "master_event_pull.ipc").string();
  const int srv = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  ASSERT_EQ(::bind(srv, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(srv, 1), 0);

  EventFirer firer(Endpoint::unix_socket(path));
  const auto data = map_of({{"n", "1"}});
  firer.fire("salttap/test/1", data.get(), Framing::len32);
  firer.fire("salttap/test/2", data.get(), Framing::len32);  // same connection
  firer.close();
  const int conn = ::accept(srv, nullptr, nullptr);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(conn, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  ::close(conn);
  ::close(srv);
  const auto events = decode_all(got);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].tag(), "salttap/test/2");

  EventFirer nowhere(Endpoint::unix_socket((dir.path() / "missing.ipc").string()));
  EXPECT_THROW(nowhere.fire("salttap/x", data.get(), Framing::plain), FireError);
}

TEST(PullFramingProbe, GivesUpWhenThePubSocketNeverAnswers) {
  TempDir dir;
  salttap::testing::FakeSteadyTime time;
  ProbeOptions options;
  options.pub = Endpoint::unix_socket((dir.path() / "master_event_pub.ipc").string());  // no master
  options.pull = Endpoint::unix_socket((dir.path() / "master_event_pull.ipc").string());
  options.connect_timeout = std::chrono::milliseconds(200);
  options.steady_time = &time;
  const auto start = time.now();
  ::testing::internal::CaptureStderr();
  auto probed = std::async(std::launch::async, [&] { return probe_pull_framing(options); });
  time.advance_until([&] { return probed.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(probed.get(), Framing::unknown);
  EXPECT_EQ(time.now() - start, options.connect_timeout);
  EXPECT_NE(log.find("cannot subscribe"), std::string::npos) << log;
}

}  // namespace
}  // namespace salttap::tap
