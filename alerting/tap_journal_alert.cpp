#include "alerting/tap_journal_alert.h"

#include <fmt/format.h>

#include "alerting/internal/system_alert.h"
#include "common/json_writer.h"

namespace salttap::alerting {

std::string tap_journal_reason(const tap::JournalStats& stats, const tap::JournalConfig& config) {
  const std::string cause = stats.refused_for_error
                                ? std::string("a write to the tap journal failed (disk full or an I/O error)")
                                : fmt::format("the tap journal reached max_bytes ({})", config.max_bytes);
  return cause + ": events from the bus are dropped until it has drained; the pipeline is behind the master";
}

correlator::Alert make_tap_journal_alert(std::string_view master_id, Micros now, const tap::JournalStats& stats,
                                         const tap::JournalConfig& config) {
  using correlator::AlertKind;
  correlator::Alert alert{AlertKind::tap_journal_full, {AlertKind::tap_journal_full}, "", "", now, now};
  json::StringOut os{alert.json};
  json::Writer w(os);
  start_system_alert(w, AlertKind::tap_journal_full, master_id, now);
  w.Key("journal_bytes"), w.Uint64(stats.bytes);
  w.Key("journal_max_bytes"), w.Uint64(config.max_bytes);
  w.Key("dropped_events"), w.Uint64(stats.dropped_full + stats.dropped_error);
  w.Key("reason"), json::string(w, tap_journal_reason(stats, config));
  w.EndObject();
  return alert;
}

}  // namespace salttap::alerting
