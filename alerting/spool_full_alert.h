#pragma once
// The alert raised once per full-spool episode of a spool lane (the engine is
// not taking documents and the indexer's disk spool started refusing them):
// the live lane, or `run`'s backfill lane (documents from the job cache).
// Its reason names the lane and states the lane's policy as configured: the
// share of max_bytes above which raw events and states are refused
// (SpoolConfig::events_limit / states_limit), while job, return and alert
// documents wait for room.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "correlator/alert.h"
#include "indexer/spool.h"
#include "indexer/spool_lanes.h"

namespace salttap::alerting {

// "the engine is not taking documents: raw events are refused above 80% of
// max_bytes, states above 90%; job, return and alert documents wait"; for the
// backfill lane, prefixed "backfill lane (documents from the job cache): ".
std::string spool_full_reason(const indexer::SpoolConfig& spool, indexer::Lane lane = indexer::Lane::live);

// {"alert": "spool_full", "kinds": ["spool_full"], "master", "settled_at",
//  "lane", "spool_bytes", "spool_max_bytes", "reason"}; no jid. `spool` is
// the lane's own config (its max_bytes).
correlator::Alert make_spool_full_alert(std::string_view master_id, Micros now, std::uint64_t spool_bytes,
                                        const indexer::SpoolConfig& spool, indexer::Lane lane = indexer::Lane::live);

}  // namespace salttap::alerting
