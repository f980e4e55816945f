#include "alerting/spool_full_alert.h"

#include <cmath>

#include <fmt/format.h>

#include "alerting/internal/system_alert.h"
#include "common/json_writer.h"

namespace salttap::alerting {
namespace {

// 0.8 -> "80%", 0.755 -> "75.5%" (a share of max_bytes, in (0, 1]).
std::string percent(double share) { return fmt::format("{:g}%", std::round(share * 1e4) / 100); }

}  // namespace

std::string spool_full_reason(const indexer::SpoolConfig& spool, indexer::Lane lane) {
  return fmt::format(
      "{}the engine is not taking documents: raw events are refused above {} of max_bytes, states above {}; job, "
      "return and alert documents wait",
      lane == indexer::Lane::backfill ? "backfill lane (documents from the job cache): " : "",
      percent(spool.events_limit), percent(spool.states_limit));
}

correlator::Alert make_spool_full_alert(std::string_view master_id, Micros now, std::uint64_t spool_bytes,
                                        const indexer::SpoolConfig& spool, indexer::Lane lane) {
  using correlator::AlertKind;
  correlator::Alert alert{AlertKind::spool_full, {AlertKind::spool_full}, "", "", now, now};
  json::StringOut os{alert.json};
  json::Writer w(os);
  start_system_alert(w, AlertKind::spool_full, master_id, now);
  w.Key("lane"), json::string(w, indexer::to_string(lane));
  w.Key("spool_bytes"), w.Uint64(spool_bytes);
  w.Key("spool_max_bytes"), w.Uint64(spool.max_bytes);
  w.Key("reason"), json::string(w, spool_full_reason(spool, lane));
  w.EndObject();
  return alert;
}

}  // namespace salttap::alerting
