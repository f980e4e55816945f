#include "indexer/spool_metrics.h"

namespace salttap::indexer {

void publish_spool_metrics(Metrics& m, const Spool& spool,
                           std::span<const std::uint64_t, kDocClasses> stopped_while_full,
                           std::uint64_t backpressure_waits) {
  using enum MetricId;
  const SpoolStats s = spool.stats();
  const RecoveryReport& recovered = spool.recovery();
  m.gauge(spool_size_bytes, static_cast<double>(s.bytes));
  m.gauge(spool_segments, static_cast<double>(s.segments));
  m.gauge(spool_pending_documents, static_cast<double>(s.pending_records));
  m.counter(spool_appended_documents, s.appended_records);
  m.counter(spool_appended_bytes, s.appended_bytes);
  m.counter(spool_acked_documents, s.acked_records);
  m.counter(spool_fsyncs, s.fsyncs);
  m.gauge(spool_full, s.full ? 1 : 0);
  // A job/return/alert document that timed out waiting for room is offered
  // again (back-pressure), so "timed_out" is a wait, not a loss.
  for (std::size_t c = 0; c < kDocClasses; ++c) {
    const auto cls = to_string(static_cast<DocClass>(c));
    for (auto why : {DropReason::full, DropReason::too_large, DropReason::io_error})
      m.counter(spool_dropped_documents, {cls, to_string(why)}, s.dropped_by_reason[static_cast<std::size_t>(why)][c]);
    m.counter(spool_dropped_documents, {cls, "stopped_while_full"}, stopped_while_full[c]);
    m.counter(spool_backpressure_timeouts, {cls},
              s.dropped_by_reason[static_cast<std::size_t>(DropReason::timed_out)][c]);
  }
  m.counter(spool_backpressure_waits, backpressure_waits);
  m.counter(spool_io_errors, s.io_errors);
  m.counter(spool_corrupt_records, {"recovery"}, recovered.corrupt_records);
  m.counter(spool_corrupt_records, {"read"}, s.read_corrupt_records);
  m.counter(spool_torn_tails, recovered.torn_tails);
}

}  // namespace salttap::indexer
