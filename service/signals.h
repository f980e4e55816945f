#pragma once
// SIGINT/SIGTERM set a flag that the command loops poll; SIGPIPE is ignored
// so a closed stdout is seen as a write error, not a crash.

namespace salttap::service {

void install_stop_signals();
bool stop_requested();

}  // namespace salttap::service
