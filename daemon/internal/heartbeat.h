#pragma once
// What `salttap run` tells systemd, and when (through SystemdNotifier):
//   - READY=1 once the tap is connected to the bus (the spool is open before
//     the loop starts), or after `ready_grace` if the master is not up yet,
//     so a stopped master does not fail the unit's start; never waits for the
//     engine;
//   - STATUS= every `status_every`: events/s, the bus, the spool depth, the
//     engine;
//   - WATCHDOG=1 at half systemd's watchdog interval. tick() is called from
//     the pipeline thread on every batch (the live feed ends a batch at least
//     every 200 ms, events or not) and while the pipeline waits for room in a
//     full spool, so only a wedged pipeline misses it and is restarted;
//   - RELOADING=1 (and STATUS=reloading the config) when a config reload
//     begins, READY=1 when it is over (applied or not) and STATUS= again at
//     the next tick; only once READY was sent (before, systemd still waits
//     for the start);
//   - STOPPING=1 when the stop signal was seen.
// Time is passed in, so tests drive it.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "daemon/internal/systemd_notifier.h"

namespace salttap::daemon {

struct DaemonSnapshot {
  std::uint64_t events = 0;  // decoded from the bus since start
  bool bus_connected = false;
  std::uint64_t spool_pending = 0;  // documents spooled, not yet acknowledged
  bool engine_setup_done = false;
  bool engine_reachable = false;
};

// "12.5 events/s, bus connected, spool 340 pending, engine ok"
std::string status_line(const DaemonSnapshot& snapshot, double events_per_second);

class DaemonHeartbeat {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Options {
    std::chrono::milliseconds ready_grace{std::chrono::seconds(10)};
    std::chrono::milliseconds status_every{std::chrono::seconds(5)};
  };

  // `snapshot` is read on the pipeline thread, when a STATUS is due or the
  // bus connection decides READY.
  DaemonHeartbeat(SystemdNotifier& notifier, TimePoint start, std::function<DaemonSnapshot()> snapshot,
                  Options options);
  DaemonHeartbeat(SystemdNotifier& notifier, TimePoint start, std::function<DaemonSnapshot()> snapshot)
      : DaemonHeartbeat(notifier, start, std::move(snapshot), Options{}) {}

  void tick(TimePoint now);
  void stopping();
  void reloading();
  void reloaded();
  bool ready_sent() const { return ready_; }

 private:
  SystemdNotifier& notifier_;
  TimePoint start_;
  std::function<DaemonSnapshot()> snapshot_;
  Options options_;
  bool ready_ = false;
  bool stopping_ = false;
  bool watchdog_sent_ = false;
  bool status_now_ = false;  // a STATUS at the next tick, whenever the last one was
  TimePoint last_watchdog_{};
  TimePoint last_status_{};
  std::uint64_t last_events_ = 0;
};

}  // namespace salttap::daemon
