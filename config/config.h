#pragma once
// salttap's own config file (YAML), strictly validated: an unknown key is an
// error naming it. Every key is optional; docs/configuration.md lists
// them with their defaults. `salttap check-config FILE` validates one.
//
//   master_config: /etc/salt/master     where the bus is (see tap/master_config.h)
//   master_id: ""                       carried in alerts
//   fleet_id: ""                        the masters that form one fleet (docs/masters.md); "": master_id
//   correlator:
//     deadlines: [{fun: "state.*", seconds: 3600}, ...]   first match wins; replaces the defaults
//     missing_after_seconds: N          overrides every deadline
//     orphan_settle_seconds: 10
//     late_grace_seconds: 3600
//     max_jobs: 100000
//     noise_funs: [saltutil.find_job, saltutil.running]
//   audit:
//     default_rules: true               keep the built-in rules (correlator/audit.h)
//     rules: [...]                      more rules (correlator/audit.h parse_audit_rules)
//   redaction:                          correlator/redactor.h parse_redaction_config
//     key_patterns: [...]
//     redact_return_funs: [...]
//   alerts:
//     on_failed: true
//     on_missing: true
//     min_risk: high                    none | low | medium | high | critical
//     list_cap: 50
//     log: true
//     webhook: {url: ..., headers: ["Authorization: Bearer ..."], timeout_seconds: 10,
//               max_attempts: 8, backoff_initial_ms: 1000, backoff_max_ms: 60000,
//               tls: {verify: true, ca_file: ..., client_cert: ..., client_key: ...}}
//     fire_event: false                 salttap/alert/<kind>/<jid> on the master bus (for reactors)
//     dedupe: none                      none | engine: one delivery per job across a fleet's salttaps
//     dedupe_timeout_ms: 2000           the engine claim's timeout (fail-open: delivered)
//     dedupe_orphan_delay_seconds: 5    an orphan job's alert waits first (the publisher's goes first)
//   checkpoint:                         the correlator's open jobs across restarts (docs/checkpoint.md)
//     enabled: true
//     path: ""                          default: correlator.checkpoint beside the spool directory
//     interval_seconds: 10              written when something changed, and at shutdown
//   reconcile:                          `run` indexes what the job cache holds (recovery/reconciler.h)
//     enabled: true
//     overlap_seconds: 5
//     state_interval_seconds: 10
//     max_spool_pending: 2000
//   tap:                                the bus reader's buffers (docs/tap-journal.md)
//     queue_max_events: 50000           in memory, decoded
//     queue_max_bytes: 16777216
//     journal: {enabled: true, dir: "", max_bytes: 1073741824, segment_bytes: 16777216}
//                                       dir "": tap-journal beside the spool directory
//   ui:                                 the job browser (docs/ui.md)
//     enabled: true                     `run` serves it under /ui/ on its metrics listener
//     listen: 127.0.0.1:9109            `salttap ui`'s address (--listen overrides)
//     username: ""                      basic auth, with password or password_file; none: open
//     password_file: ""
//   listener:                           the HTTP listener of `ui` and of `run`'s --metrics-listen (docs/ui.md#limits)
//     header_timeout_ms: 10000          until a request's header is whole
//     idle_timeout_ms: 30000            a keep-alive connection between requests
//     request_timeout_ms: 60000         from the header to the last byte of the answer
//     max_connections: 64               more: 503 (lowered to the file-handle budget)
//     max_header_bytes: 16384           more: 431
//     max_target_bytes: 8192            more: 414
//     allowed_hosts: []                 Host names besides the listen address, localhost and IP literals
//   fleet: {...}                        silent minions (fleet/fleet_config.h, docs/fleet.md)
//   indexer: {...}                      config/indexer_section.h
//   elasticsearch: {...}                Salt's returner block, accepted as is (indexer_config.h)

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "alerting/configured_outlets.h"
#include "alerting/webhook_alert_outlet.h"
#include "common/config_error.h"
#include "common/listener_limits.h"
#include "config/bus_location.h"
#include "config/indexer_section.h"
#include "correlator/alert.h"
#include "correlator/audit.h"
#include "correlator/correlator_config.h"
#include "correlator/redactor.h"
#include "fleet/fleet_config.h"
#include "tap/event_queue.h"

namespace salttap::config {

struct CheckpointConfig {
  bool enabled = true;
  std::filesystem::path path;  // empty: checkpoint_path() picks it
  std::chrono::milliseconds interval{10'000};
};

// `reconcile:` - `run` indexes what the job cache holds and the index may
// lack (recovery/reconciler.h, docs/backfill.md).
struct ReconcileConfig {
  bool enabled = true;
  Micros overlap = 5 * kMicrosPerSecond;          // read again before the recorded coverage (clock skew)
  Micros state_interval = 10 * kMicrosPerSecond;  // coverage written to the state file this often
  // Cache documents wait while the spool holds more. The spool is one queue,
  // so a live document waits behind this many: two default bulk batches keep
  // both of the shipper's requests busy and cost a live job well under a
  // second (20,000 cost it ten).
  std::uint64_t max_spool_pending = 2'000;
};

// `tap:` - what the bus reader holds while the pipeline is behind: a small
// queue of decoded events in memory, then raw frames in the journal on disk
// (tap/tap_journal.h, docs/tap-journal.md). Read at start only.
struct TapConfig {
  tap::QueueLimits queue;
  bool journal = true;
  std::filesystem::path journal_dir;  // empty: tap_journal_dir() picks it
  std::uint64_t journal_max_bytes = 1ull << 30;
  std::uint64_t journal_segment_bytes = 16ull << 20;
};

// `ui:` - the job browser (web/job_browser.h, docs/ui.md).
struct UiConfig {
  bool enabled = true;
  std::string listen = "127.0.0.1:9109";
  std::string username;
  std::string password;                 // given inline
  std::filesystem::path password_file;  // read at start (its first line)
};

struct Config {
  std::optional<std::string> master_config;
  std::string master_id;
  std::string fleet_id;  // empty: the effective master id (config/resolve.h)
  correlator::CorrelatorConfig correlator;
  std::shared_ptr<const correlator::Auditor> auditor;
  std::shared_ptr<const correlator::Redactor> redactor;
  correlator::AlertConfig alerts;
  bool alert_log = true;
  std::optional<alerting::WebhookConfig> webhook;
  bool alert_fire_event = false;
  std::string alert_dedupe = "none";  // none | engine (alerting/dedupe_alert_outlet.h)
  std::chrono::milliseconds alert_dedupe_timeout{2000};
  std::chrono::milliseconds alert_dedupe_orphan_delay{5000};
  CheckpointConfig checkpoint;
  indexer::IndexerConfig indexer = default_indexer_config();
  ReconcileConfig reconcile;
  UiConfig ui;
  ListenerLimits listener;
  TapConfig tap;
  fleet::FleetConfig fleet;
};

// Where `run` keeps its checkpoint: checkpoint.path, else
// correlator.checkpoint in the spool directory's parent (the state directory).
std::filesystem::path checkpoint_path(const Config& config);
// Where `run` keeps the tap journal: tap.journal.dir, else tap-journal in
// the spool directory's parent (the state directory).
std::filesystem::path tap_journal_dir(const Config& config);
// Where `run` keeps the fleet's minion table (fleet/fleet_state_format.h):
// fleet.state_path, else fleet.state in the state directory.
std::filesystem::path fleet_state_path(const Config& config);
// Where `run` records which stretch of the job cache it has reconciled:
// reconcile.state in the spool directory (it describes what the spool took).
std::filesystem::path reconcile_state_path(const Config& config);

// The defaults (no file).
Config default_config();
// Throws ConfigError naming the file and key.
Config load_config(const std::string& path);
// The alert outlets `config` asks for (`run`, `watch --jobs`); the bus
// endpoints are resolved only when alert events are fired.
alerting::OutletsConfig alert_outlets_config(const Config& config, const BusLocation& bus);
// The same with the bus target given (`run` resolves it once: the bus is not
// reloaded); `fire` is used only when the config fires alert events.
alerting::OutletsConfig alert_outlets_config(const Config& config, const std::optional<alerting::BusTarget>& fire);

}  // namespace salttap::config
