#pragma once
// The systemd notify protocol (sd_notify(3), libsystemd): READY=1, STATUS=,
// STOPPING=1, WATCHDOG=1, RELOADING=1, sent to the datagram socket systemd names in
// NOTIFY_SOCKET. Every call is a no-op when NOTIFY_SOCKET is unset (salttap
// started by hand, or by a unit that is not Type=notify). The watchdog
// interval is systemd's WatchdogSec=, passed in WATCHDOG_USEC (and
// WATCHDOG_PID, when set, must be this process).

#include <chrono>
#include <optional>
#include <string_view>

namespace salttap::daemon {

class SystemdNotifier {
 public:
  // Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID once.
  SystemdNotifier();

  bool enabled() const { return enabled_; }
  // systemd's watchdog interval: salttap must say WATCHDOG=1 more often than this.
  std::optional<std::chrono::microseconds> watchdog_interval() const { return watchdog_; }

  void ready() { send("READY=1"); }
  // A config reload begins (RELOADING=1 with MONOTONIC_USEC, as systemd
  // asks); ready() says it is over, applied or not.
  void reloading();
  void status(std::string_view text);  // one line, shown by `systemctl status`
  void stopping() { send("STOPPING=1"); }
  void watchdog() { send("WATCHDOG=1"); }

  // Messages that could not be sent (the socket went away): counted; the first is logged.
  std::uint64_t failures() const { return failures_; }

 private:
  void send(std::string_view message);

  bool enabled_ = false;
  std::optional<std::chrono::microseconds> watchdog_;
  std::uint64_t failures_ = 0;
};

}  // namespace salttap::daemon
