#include "tap/tap_metrics.h"

namespace salttap::tap {

void publish_tap_metrics(Metrics& m, const TapStats& s, const QueueStats& q) {
  using enum MetricId;
  m.counter(tap_read_bytes, s.bytes);
  m.counter(tap_frames, s.frames);
  m.counter(tap_events, s.events + q.journal_events);  // the reader's, and the journal's decoded when drained
  m.counter(tap_skipped_frames, {"undecodable"}, s.decode_errors + q.journal_decode_errors);
  m.counter(tap_skipped_frames, {"oversize"}, s.oversize_frames);
  m.counter(tap_skipped_frames, {"invalid"}, s.invalid_frames);
  m.counter(tap_skipped_frames, {"truncated"}, s.truncated_frames);
  m.counter(tap_skipped_bytes, s.skipped_bytes);
  m.counter(tap_resyncs, s.resyncs);
  m.counter(tap_dropped_events, {"queue_full"}, s.queue_drops);
  const JournalStats j = q.journal.value_or(JournalStats{});  // zeros without a journal (`watch`)
  m.counter(tap_dropped_events, {"journal_full"}, j.dropped_full);
  m.counter(tap_dropped_events, {"journal_error"}, j.dropped_error);
  m.gauge(tap_journal_bytes, static_cast<double>(j.bytes));
  m.gauge(tap_journal_frames, static_cast<double>(j.frames));
  m.gauge(tap_journal_segments, static_cast<double>(j.segments));
  m.counter(tap_journal_spilled_frames, j.spilled_frames);
  m.counter(tap_journal_spilled_bytes, j.spilled_bytes);
  m.counter(tap_journal_drained_frames, j.drained_frames);
  m.counter(tap_journal_corrupt_records, j.corrupt_records);
  m.counter(tap_journal_corrupt_bytes, j.corrupt_bytes);
  m.counter(tap_journal_write_errors, j.write_errors);
  m.gauge(tap_journal_refusing, j.refusing ? 1 : 0);
  m.counter(tap_connects, s.connects);
  m.counter(tap_disconnects, s.disconnects);
  m.counter(tap_connect_failures, s.connect_failures);
  m.gauge(tap_connected, s.connected ? 1 : 0);
  m.gauge(tap_queue_events, static_cast<double>(q.depth));
  m.gauge(tap_queue_bytes, static_cast<double>(q.bytes));
}

}  // namespace salttap::tap
