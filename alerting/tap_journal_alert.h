#pragma once
// The alert raised once per refusal episode of the tap journal: the pipeline
// fell behind a burst, the in-memory queue and then the journal filled (or a
// journal write failed, ENOSPC), and frames from the bus were dropped. Jobs
// whose events were among them may be reported wrongly (a minion missing
// whose return was lost); run's reconcile pass reads the job cache for them.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "correlator/alert.h"
#include "tap/tap_journal.h"

namespace salttap::alerting {

// "the tap journal reached max_bytes (1073741824): events from the bus are
// dropped until it has drained" / "... a write to the tap journal failed: ..."
std::string tap_journal_reason(const tap::JournalStats& stats, const tap::JournalConfig& config);

// {"alert": "tap_journal_full", "kinds": ["tap_journal_full"], "master",
//  "settled_at", "journal_bytes", "journal_max_bytes", "dropped_events", "reason"}; no jid.
correlator::Alert make_tap_journal_alert(std::string_view master_id, Micros now, const tap::JournalStats& stats,
                                         const tap::JournalConfig& config);

}  // namespace salttap::alerting
