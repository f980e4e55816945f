#pragma once
// Prometheus samples of the spool (docs/operations.md "Metrics"): its size,
// what it took, dropped and found corrupt, its I/O errors and back-pressure.
// Each lane has families of its own: the live lane's salttap_spool_*, the
// backfill lane's salttap_spool_backfill_*, with the same figures.

#include <cstdint>
#include <span>

#include "common/metrics.h"
#include "indexer/spool.h"
#include "indexer/spool_lanes.h"

namespace salttap::indexer {

// `stopped_while_full`: job/return/alert documents, by class, still waiting
// for room when salttap stopped - never offered to the spool, so counted by
// its caller (IndexerService); `backpressure_waits` likewise.
void publish_spool_metrics(Metrics& metrics, const Spool& spool,
                           std::span<const std::uint64_t, kDocClasses> stopped_while_full,
                           std::uint64_t backpressure_waits, Lane lane = Lane::live);

}  // namespace salttap::indexer
