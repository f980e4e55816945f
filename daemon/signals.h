#pragma once
// SIGINT/SIGTERM set a flag that the command loops poll; SIGPIPE is ignored
// so a closed stdout is seen as a write error, not a crash. SIGHUP (`run`
// only) sets another flag: the pipeline thread reloads the config between
// two batches of events (daemon/internal/config_reload.h), never in the handler.

namespace salttap::daemon {

void install_stop_signals();
bool stop_requested();

// SIGHUP asks for a reload instead of ending the process.
void install_reload_signal();
// True once per SIGHUP (several before the call count as one); clears the flag.
bool take_reload_request();

}  // namespace salttap::daemon
