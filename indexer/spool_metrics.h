#pragma once
// Prometheus samples of the spool (docs/operations.md "Metrics"): its size,
// what it took, dropped and found corrupt, its I/O errors and back-pressure.

#include <cstdint>
#include <span>

#include "common/metrics.h"
#include "indexer/spool.h"

namespace salttap::indexer {

// `stopped_while_full`: job/return/alert documents, by class, still waiting
// for room when salttap stopped - never offered to the spool, so counted by
// its caller (IndexerService); `backpressure_waits` likewise.
void publish_spool_metrics(Metrics& metrics, const Spool& spool,
                           std::span<const std::uint64_t, kDocClasses> stopped_while_full,
                           std::uint64_t backpressure_waits);

}  // namespace salttap::indexer
