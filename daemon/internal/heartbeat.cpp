#include "daemon/internal/heartbeat.h"

#include <algorithm>

#include <fmt/core.h>

#include "common/log.h"

namespace salttap::daemon {

std::string status_line(const DaemonSnapshot& s, double events_per_second) {
  const char* engine = !s.engine_setup_done ? "engine setup pending"
                       : s.engine_reachable ? "engine ok"
                                            : "engine unreachable";
  return fmt::format("{:.1f} events/s, bus {}, spool {} pending, {}", events_per_second,
                     s.bus_connected ? "connected" : "not connected", s.spool_pending, engine);
}

DaemonHeartbeat::DaemonHeartbeat(SystemdNotifier& notifier, TimePoint start, std::function<DaemonSnapshot()> snapshot,
                                 Options options)
    : notifier_(notifier), start_(start), snapshot_(std::move(snapshot)), options_(options), last_status_(start) {}

void DaemonHeartbeat::tick(TimePoint now) {
  if (!notifier_.enabled() || stopping_) return;
  if (const auto interval = notifier_.watchdog_interval()) {
    if (!watchdog_sent_ || now - last_watchdog_ >= *interval / 2) {
      notifier_.watchdog();
      watchdog_sent_ = true;
      last_watchdog_ = now;
    }
  }
  const bool status_due = status_now_ || now - last_status_ >= options_.status_every;
  if (ready_ && !status_due) return;
  const DaemonSnapshot s = snapshot_();
  if (!ready_ && (s.bus_connected || now - start_ >= options_.ready_grace)) {
    ready_ = true;
    // Logged first: whoever sees READY finds the line already written.
    log::info("run: told systemd READY ({})", s.bus_connected ? "on the bus" : "the bus is not up yet");
    notifier_.status(status_line(s, 0));
    notifier_.ready();
    last_status_ = now;
    last_events_ = s.events;
    return;
  }
  if (!ready_ || !status_due) return;
  const double seconds = std::max(std::chrono::duration<double>(now - last_status_).count(), 0.001);
  notifier_.status(status_line(s, static_cast<double>(s.events - last_events_) / seconds));
  status_now_ = false;
  last_status_ = now;
  last_events_ = s.events;
}

void DaemonHeartbeat::reloading() {
  if (!ready_ || stopping_) return;
  notifier_.reloading();
  notifier_.status("reloading the config");
}

void DaemonHeartbeat::reloaded() {
  if (!ready_ || stopping_) return;
  notifier_.ready();
  status_now_ = true;  // the next tick replaces the "reloading" STATUS
}

void DaemonHeartbeat::stopping() {
  if (stopping_) return;
  stopping_ = true;
  notifier_.stopping();
  notifier_.status("stopping: draining the bulk requests in flight; the spool keeps the rest");
}

}  // namespace salttap::daemon
