// The systemd notify protocol against a real AF_UNIX datagram socket the test
// binds and names in NOTIFY_SOCKET, as systemd does: what SystemdNotifier
// sends, that it does nothing without NOTIFY_SOCKET, the watchdog interval
// from WATCHDOG_USEC / WATCHDOG_PID, and DaemonHeartbeat's READY, STATUS,
// WATCHDOG and STOPPING on a time the test drives.

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "daemon/internal/heartbeat.h"
#include "daemon/internal/systemd_notifier.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A bound datagram socket, named in NOTIFY_SOCKET while it lives.
class NotifySocket {
 public:
  NotifySocket() {
    char tmpl[] = "/tmp/salttap-notify-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    path_ = dir_ / "notify";
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket failed");
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0)
      throw std::runtime_error("bind failed");
    ::setenv("NOTIFY_SOCKET", path_.c_str(), 1);
  }
  ~NotifySocket() {
    ::unsetenv("NOTIFY_SOCKET");
    ::close(fd_);
    fs::remove_all(dir_);
  }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  // Every datagram queued now. sd_notify() has sent when it returns, so
  // nothing is in flight.
  std::vector<std::string> take() {
    std::vector<std::string> messages;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
      if (n < 0) break;
      messages.emplace_back(buf, static_cast<std::size_t>(n));
    }
    return messages;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path dir_, path_;
  int fd_ = -1;
};

// WATCHDOG_USEC / WATCHDOG_PID for one test.
class WatchdogEnv {
 public:
  WatchdogEnv(const std::string& usec, pid_t pid) {
    ::setenv("WATCHDOG_USEC", usec.c_str(), 1);
    ::setenv("WATCHDOG_PID", std::to_string(pid).c_str(), 1);
  }
  ~WatchdogEnv() {
    ::unsetenv("WATCHDOG_USEC");
    ::unsetenv("WATCHDOG_PID");
  }
};

using Messages = std::vector<std::string>;
using TimePoint = daemon::DaemonHeartbeat::TimePoint;
const TimePoint kStart = TimePoint{} + 1000h;

TEST(SystemdNotifier, WithoutNotifySocketEverythingIsANoOp) {
  ::unsetenv("NOTIFY_SOCKET");
  const WatchdogEnv watchdog("2000000", ::getpid());
  daemon::SystemdNotifier notifier;
  EXPECT_FALSE(notifier.enabled());
  EXPECT_FALSE(notifier.watchdog_interval()) << "no watchdog without a socket to feed it";
  notifier.ready();
  notifier.status("x");
  notifier.watchdog();
  notifier.stopping();
  EXPECT_EQ(notifier.failures(), 0u);
}

TEST(SystemdNotifier, SendsEachStateAsOneDatagram) {
  NotifySocket socket;
  daemon::SystemdNotifier notifier;
  ASSERT_TRUE(notifier.enabled());
  EXPECT_FALSE(notifier.watchdog_interval());
  notifier.ready();
  notifier.status("3.0 events/s,\nbus connected");
  notifier.watchdog();
  notifier.stopping();
  EXPECT_EQ(socket.take(), (Messages{"READY=1", "STATUS=3.0 events/s, bus connected", "WATCHDOG=1", "STOPPING=1"}));
  EXPECT_EQ(notifier.failures(), 0u);
}

TEST(SystemdNotifier, WatchdogIntervalIsForThisProcessOnly) {
  NotifySocket socket;
  {
    const WatchdogEnv watchdog("3000000", ::getpid());
    EXPECT_EQ(daemon::SystemdNotifier().watchdog_interval(), std::chrono::microseconds(3'000'000));
  }
  {
    const WatchdogEnv watchdog("3000000", ::getpid() + 1);
    EXPECT_FALSE(daemon::SystemdNotifier().watchdog_interval()) << "WATCHDOG_PID names another process";
  }
  {
    const WatchdogEnv watchdog("not-a-number", ::getpid());
    EXPECT_FALSE(daemon::SystemdNotifier().watchdog_interval());
  }
}

TEST(SystemdNotifier, ASocketThatWentAwayIsCountedNotFatal) {
  NotifySocket socket;
  daemon::SystemdNotifier notifier;
  fs::remove(socket.path());
  notifier.ready();
  notifier.watchdog();
  EXPECT_EQ(notifier.failures(), 2u);
}

TEST(DaemonHeartbeat, ReadyOnceOnTheBusWithoutWaitingForTheEngine) {
  NotifySocket socket;
  daemon::SystemdNotifier notifier;
  daemon::DaemonSnapshot s;
  daemon::DaemonHeartbeat heartbeat(notifier, kStart, [&] { return s; });
  heartbeat.tick(kStart + 100ms);
  EXPECT_EQ(socket.take(), Messages{}) << "not on the bus yet";
  s.bus_connected = true;
  s.spool_pending = 7;
  heartbeat.tick(kStart + 300ms);
  EXPECT_EQ(socket.take(),
            (Messages{"STATUS=0.0 events/s, bus connected, spool 7 pending, engine setup pending", "READY=1"}));
  EXPECT_TRUE(heartbeat.ready_sent());
  heartbeat.tick(kStart + 500ms);
  EXPECT_EQ(socket.take(), Messages{}) << "READY once";
}

TEST(DaemonHeartbeat, ReadyAfterTheGraceWhenTheMasterIsNotUp) {
  NotifySocket socket;
  daemon::SystemdNotifier notifier;
  daemon::DaemonHeartbeat heartbeat(notifier, kStart, [] { return daemon::DaemonSnapshot{}; }, {.ready_grace = 10s});
  heartbeat.tick(kStart + 9999ms);
  EXPECT_EQ(socket.take(), Messages{});
  heartbeat.tick(kStart + 10s);
  EXPECT_EQ(socket.take(),
            (Messages{"STATUS=0.0 events/s, bus not connected, spool 0 pending, engine setup pending", "READY=1"}));
}

TEST(DaemonHeartbeat, StatusEveryFewSecondsWithTheEventRate) {
  NotifySocket socket;
  daemon::SystemdNotifier notifier;
  daemon::DaemonSnapshot s{.events = 100, .bus_connected = true};
  daemon::DaemonHeartbeat heartbeat(notifier, kStart, [&] { return s; }, {.status_every = 5s});
  heartbeat.tick(kStart);
  ASSERT_EQ(socket.take().size(), 2u);  // STATUS, READY
  s.events = 150;
  s.spool_pending = 12;
  s.engine_setup_done = true;
  s.engine_reachable = true;
  heartbeat.tick(kStart + 4s);
  EXPECT_EQ(socket.take(), Messages{}) << "not due yet";
  heartbeat.tick(kStart + 5s);
  EXPECT_EQ(socket.take(), (Messages{"STATUS=10.0 events/s, bus connected, spool 12 pending, engine ok"}));
  s.engine_reachable = false;
  heartbeat.tick(kStart + 10s);
  EXPECT_EQ(socket.take(), (Messages{"STATUS=0.0 events/s, bus connected, spool 12 pending, engine unreachable"}));
}

TEST(DaemonHeartbeat, WatchdogAtHalfTheIntervalUntilStopping) {
  NotifySocket socket;
  const WatchdogEnv watchdog("2000000", ::getpid());
  daemon::SystemdNotifier notifier;
  ASSERT_EQ(notifier.watchdog_interval(), std::chrono::microseconds(2'000'000));
  daemon::DaemonHeartbeat heartbeat(notifier, kStart, [] { return daemon::DaemonSnapshot{.bus_connected = true}; });
  heartbeat.tick(kStart);
  EXPECT_EQ(socket.take().front(), "WATCHDOG=1") << "the first tick feeds the watchdog";
  heartbeat.tick(kStart + 999ms);
  EXPECT_EQ(socket.take(), Messages{});
  heartbeat.tick(kStart + 1s);
  EXPECT_EQ(socket.take(), Messages{"WATCHDOG=1"});
  heartbeat.tick(kStart + 1500ms);
  EXPECT_EQ(socket.take(), Messages{});
  heartbeat.tick(kStart + 2100ms);
  EXPECT_EQ(socket.take(), Messages{"WATCHDOG=1"});

  heartbeat.stopping();
  EXPECT_EQ(
      socket.take(),
      (Messages{"STOPPING=1", "STATUS=stopping: draining the bulk requests in flight; the spool keeps the rest"}));
  heartbeat.stopping();
  heartbeat.tick(kStart + 10s);
  EXPECT_EQ(socket.take(), Messages{}) << "nothing after STOPPING";
}

TEST(DaemonHeartbeat, AReloadIsReloadingThenReadyOnceTheStartIsOver) {
  NotifySocket socket;
  daemon::SystemdNotifier notifier;
  daemon::DaemonSnapshot s;
  daemon::DaemonHeartbeat heartbeat(notifier, kStart, [&] { return s; });
  heartbeat.reloading();
  heartbeat.reloaded();
  EXPECT_EQ(socket.take(), Messages{}) << "systemd still waits for READY: a reload says nothing";
  s.bus_connected = true;
  heartbeat.tick(kStart + 100ms);
  socket.take();

  heartbeat.reloading();
  const Messages reloading = socket.take();
  ASSERT_EQ(reloading.size(), 2u);
  // RELOADING=1 with the monotonic clock's now, as systemd asks.
  EXPECT_TRUE(reloading[0].starts_with("RELOADING=1\nMONOTONIC_USEC=")) << reloading[0];
  const std::string usec = reloading[0].substr(reloading[0].find('=', 12) + 1);
  EXPECT_FALSE(usec.empty());
  EXPECT_TRUE(std::all_of(usec.begin(), usec.end(), [](char c) { return c >= '0' && c <= '9'; })) << usec;
  EXPECT_EQ(reloading[1], "STATUS=reloading the config");
  heartbeat.reloaded();
  EXPECT_EQ(socket.take(), Messages{"READY=1"});
  heartbeat.tick(kStart + 200ms);
  EXPECT_EQ(socket.take(), (Messages{"STATUS=0.0 events/s, bus connected, spool 0 pending, engine setup pending"}))
      << "the reloading STATUS replaced at the next tick";
  heartbeat.tick(kStart + 300ms);
  EXPECT_EQ(socket.take(), Messages{});

  heartbeat.stopping();
  socket.take();
  heartbeat.reloading();
  heartbeat.reloaded();
  EXPECT_EQ(socket.take(), Messages{}) << "nothing after STOPPING";
}

TEST(DaemonHeartbeat, WithoutNotifySocketTheSnapshotIsNeverTaken) {
  ::unsetenv("NOTIFY_SOCKET");
  daemon::SystemdNotifier notifier;
  int snapshots = 0;
  daemon::DaemonHeartbeat heartbeat(notifier, kStart, [&] {
    ++snapshots;
    return daemon::DaemonSnapshot{};
  });
  for (int i = 0; i < 100; ++i) heartbeat.tick(kStart + i * 1s);
  heartbeat.stopping();
  EXPECT_EQ(snapshots, 0);
}

}  // namespace
}  // namespace salttap
