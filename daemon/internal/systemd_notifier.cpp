#include "daemon/internal/systemd_notifier.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "common/errno_text.h"
#include "common/log.h"

namespace salttap::daemon {

SystemdNotifier::SystemdNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  enabled_ = socket != nullptr && *socket != '\0';
  std::uint64_t usec = 0;
  // > 0 only when WATCHDOG_USEC is set and WATCHDOG_PID (if set) is this process.
  if (enabled_ && sd_watchdog_enabled(0, &usec) > 0 && usec > 0) watchdog_ = std::chrono::microseconds(usec);
}

void SystemdNotifier::status(std::string_view text) {
  std::string message = "STATUS=";
  for (char c : text) message.push_back(c == '\n' ? ' ' : c);  // one assignment per line
  send(message);
}

void SystemdNotifier::reloading() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const auto usec =
      static_cast<std::uint64_t>(now.tv_sec) * 1'000'000u + static_cast<std::uint64_t>(now.tv_nsec) / 1000u;
  send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void SystemdNotifier::send(std::string_view message) {
  if (!enabled_) return;
  const std::string text(message);
  const int rc = sd_notify(0, text.c_str());
  if (rc > 0) return;
  if (failures_++ == 0)
    log::warn("systemd notify: could not send {} ({}); later ones are not logged", text,
              rc < 0 ? errno_text(-rc) : "NOTIFY_SOCKET gone");
}

}  // namespace salttap::daemon
