#pragma once
// Reloading salttap's config while `salttap run` runs (SIGHUP; systemd's
// `systemctl reload salttap`). The signal handler only sets a flag
// (daemon/signals.h); the pipeline thread calls reload() between two
// batches of events, so no event is half-processed and no lock is held.
//
// What a reload applies (the rest of the file is compared and reported):
//   correlator:    deadlines, missing_after_seconds, orphan_settle_seconds,
//                  late_grace_seconds, max_jobs, memory_budget_mb, noise_funs - for what comes
//                  next; open jobs keep their expected minions and the
//                  deadline they got when they opened
//   audit:, redaction:
//   alerts:        on_failed, on_missing, min_risk, list_cap, and the outlets
//                  (log, webhook, fire_event: rebuilt when they changed)
//   indexer:       functions_blacklist, functions_whitelist, events (enabled,
//                  include, exclude), text_cap_bytes
//   elasticsearch: functions_blacklist (Salt's returner block)
// Everything else (master_config, master_id, checkpoint:, reconcile:, the
// engine, its credentials and TLS, the index layout and templates, bulk:,
// spool:) needs a restart: a changed value is named in one WARN line and the
// running value is kept. A file that does not load (YAML, unknown key, bad
// pattern, a secret that cannot be read) changes nothing: the running config
// stays, and the ConfigError (with the file's path) is logged and counted.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "config/config.h"

namespace salttap::daemon {

// What a loaded file means for the running config.
struct ReloadPlan {
  config::Config next;                     // the running config with the file's reloadable settings
  std::vector<std::string> needs_restart;  // keys whose file value differs and is not applied
};

// `running` is the config in use; `loaded` the file just read, prepared the
// same way (effective indexer config, master id).
ReloadPlan plan_reload(const config::Config& running, const config::Config& loaded);

// What a reload changes in the running daemon (the pipeline, the alert
// outlets, the reconciler). apply() may throw (building an outlet): the
// reload then counts as failed; it must change nothing before it throws.
class ReloadTarget {
 public:
  virtual ~ReloadTarget() = default;
  virtual void apply(const config::Config& next) = 0;
};

struct ReloadStats {
  std::uint64_t ok = 0;
  std::uint64_t failed = 0;
  Micros last_ok = 0;  // wall time of the last applied reload; 0: none yet
};

class ConfigReloader {
 public:
  // Reads and prepares the file; throws ConfigError (or std::exception).
  using Loader = std::function<config::Config()>;

  // `source`: what the log lines name (the file's path).
  ConfigReloader(config::Config running, std::string source, Loader load, ReloadTarget& target, const Clock& clock);

  // Loads, plans and applies, logging the outcome: one INFO line when
  // applied, a WARN naming what needs a restart, an ERROR with the reason
  // when nothing was applied. True when applied.
  bool reload();

  const config::Config& running() const { return running_; }
  const ReloadStats& stats() const { return stats_; }

 private:
  config::Config running_;
  std::string source_;
  Loader load_;
  ReloadTarget& target_;
  const Clock& clock_;
  ReloadStats stats_;
};

// salttap_config_reloads_total{result}, salttap_config_last_reload_timestamp_seconds.
void publish_reload_metrics(Metrics& metrics, const ReloadStats& stats);

}  // namespace salttap::daemon
