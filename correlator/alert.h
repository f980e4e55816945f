#pragma once
// Alerts: one per job (never one per minion of a 10,000-minion job), when it
// settles failed, with missing minions, or risky. The payload carries the
// minion lists capped at list_cap, with exact counts. Field reference in
// docs/operations.md ("Alerts").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "correlator/audit.h"
#include "correlator/job.h"
#include "correlator/minion_registry.h"

namespace salttap::correlator {

// spool_full is not about a job: the indexer's disk spool started refusing
// documents (once per episode; made by alerting/spool_full_alert.h).
// tap_journal_full neither: the tap journal refused frames, events were lost
// (once per episode; alerting/tap_journal_alert.h).
// evicted: an open job settled early because the correlator's memory_budget
// (or max_jobs) was reached; its pending minions are reported missing.
// minion_silent / minion_recovered: one minion's silence episode opened /
// closed; fleet_silent / fleet_recovered: one sweep opened / closed a storm
// of them (fleet/fleet_notices.h). highstate_stale / highstate_fresh: one
// minion's stale-highstate episode opened / closed by a successful enforcing
// highstate; fleet_highstate_stale / fleet_highstate_fresh: a storm of them.
enum class AlertKind : std::uint8_t {
  failed,
  missing,
  risky,
  spool_full,
  tap_journal_full,
  evicted,
  minion_silent,
  minion_recovered,
  fleet_silent,
  fleet_recovered,
  highstate_stale,
  highstate_fresh,
  fleet_highstate_stale,
  fleet_highstate_fresh,
};
inline constexpr std::size_t kAlertKinds = 14;
std::string_view to_string(AlertKind kind);

struct AlertConfig {
  bool on_failed = true;
  bool on_missing = true;
  RiskLevel min_risk = RiskLevel::high;  // risky alert at or above this level (none: never)
  std::size_t list_cap = 50;             // minion names per list in the payload
};

struct Alert {
  AlertKind kind;                // the first of evicted > failed > missing > risky
  std::vector<AlertKind> kinds;  // every reason this job alerts
  std::string jid;
  std::string json;       // the payload (webhook body, alert event data)
  Micros started_at = 0;  // the job's (names the alerts index's day)
  Micros settled_at = 0;
  // An alert about an episode names its document (<master>/<doc_key>) and
  // the document's external version (1 opened, 2 closed), so each episode is
  // one document however often it is written; empty: one document per alert.
  std::string doc_key = {};
  std::int64_t doc_version = 0;
  // The job had no `new` here (returns only): another master published it
  // (alerting/dedupe_alert_outlet.h lets the publisher's salttap go first).
  bool orphan = false;
};

// Nothing when the job does not alert. Call once, when the job settles.
[[nodiscard]] std::optional<Alert> make_alert(const Job& job, const MinionRegistry& minions, const AlertConfig& config,
                                              std::string_view master_id = {});

}  // namespace salttap::correlator
