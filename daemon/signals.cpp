#include "daemon/signals.h"

#include <atomic>
#include <csignal>

namespace salttap::daemon {
namespace {
std::atomic<bool> g_stop{false};
std::atomic<bool> g_reload{false};
static_assert(std::atomic<bool>::is_always_lock_free, "used from a signal handler");
extern "C" void on_stop_signal(int) { g_stop.store(true); }
extern "C" void on_reload_signal(int) { g_reload.store(true); }
}  // namespace

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

bool stop_requested() { return g_stop.load(); }

void install_reload_signal() {
  struct sigaction sa {};
  sa.sa_handler = on_reload_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGHUP, &sa, nullptr);
}

bool take_reload_request() { return g_reload.exchange(false); }

}  // namespace salttap::daemon
