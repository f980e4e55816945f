#include "indexer/internal/spool_metrics.h"

namespace salttap::indexer {

namespace {

// One lane's metric families, in the order publish_spool_metrics() fills them.
struct SpoolMetricIds {
  MetricId size_bytes, segments, pending_documents, appended_documents, appended_bytes, acked_documents, fsyncs, full,
      dropped_documents, backpressure_waits, backpressure_timeouts, io_errors, corrupt_records, torn_tails;
};

constexpr SpoolMetricIds kLiveIds{MetricId::spool_size_bytes,
                                  MetricId::spool_segments,
                                  MetricId::spool_pending_documents,
                                  MetricId::spool_appended_documents,
                                  MetricId::spool_appended_bytes,
                                  MetricId::spool_acked_documents,
                                  MetricId::spool_fsyncs,
                                  MetricId::spool_full,
                                  MetricId::spool_dropped_documents,
                                  MetricId::spool_backpressure_waits,
                                  MetricId::spool_backpressure_timeouts,
                                  MetricId::spool_io_errors,
                                  MetricId::spool_corrupt_records,
                                  MetricId::spool_torn_tails};

constexpr SpoolMetricIds kBackfillIds{MetricId::spool_backfill_size_bytes,
                                      MetricId::spool_backfill_segments,
                                      MetricId::spool_backfill_pending_documents,
                                      MetricId::spool_backfill_appended_documents,
                                      MetricId::spool_backfill_appended_bytes,
                                      MetricId::spool_backfill_acked_documents,
                                      MetricId::spool_backfill_fsyncs,
                                      MetricId::spool_backfill_full,
                                      MetricId::spool_backfill_dropped_documents,
                                      MetricId::spool_backfill_backpressure_waits,
                                      MetricId::spool_backfill_backpressure_timeouts,
                                      MetricId::spool_backfill_io_errors,
                                      MetricId::spool_backfill_corrupt_records,
                                      MetricId::spool_backfill_torn_tails};

}  // namespace

void publish_spool_metrics(Metrics& m, const Spool& spool,
                           std::span<const std::uint64_t, kDocClasses> stopped_while_full,
                           std::uint64_t backpressure_waits, Lane lane) {
  const SpoolMetricIds& id = lane == Lane::backfill ? kBackfillIds : kLiveIds;
  const SpoolStats s = spool.stats();
  const RecoveryReport& recovered = spool.recovery();
  m.gauge(id.size_bytes, static_cast<double>(s.bytes));
  m.gauge(id.segments, static_cast<double>(s.segments));
  m.gauge(id.pending_documents, static_cast<double>(s.pending_records));
  m.counter(id.appended_documents, s.appended_records);
  m.counter(id.appended_bytes, s.appended_bytes);
  m.counter(id.acked_documents, s.acked_records);
  m.counter(id.fsyncs, s.fsyncs);
  m.gauge(id.full, s.full ? 1 : 0);
  // A job/return/alert document that timed out waiting for room is offered
  // again (back-pressure), so "timed_out" is a wait, not a loss.
  for (std::size_t c = 0; c < kDocClasses; ++c) {
    const auto cls = to_string(static_cast<DocClass>(c));
    for (auto why : {DropReason::full, DropReason::too_large, DropReason::io_error})
      m.counter(id.dropped_documents, {cls, to_string(why)}, s.dropped_by_reason[static_cast<std::size_t>(why)][c]);
    m.counter(id.dropped_documents, {cls, "stopped_while_full"}, stopped_while_full[c]);
    m.counter(id.backpressure_timeouts, {cls}, s.dropped_by_reason[static_cast<std::size_t>(DropReason::timed_out)][c]);
  }
  m.counter(id.backpressure_waits, backpressure_waits);
  m.counter(id.io_errors, s.io_errors);
  m.counter(id.corrupt_records, {"recovery"}, recovered.corrupt_records);
  m.counter(id.corrupt_records, {"read"}, s.read_corrupt_records);
  m.counter(id.torn_tails, recovered.torn_tails);
}

}  // namespace salttap::indexer
