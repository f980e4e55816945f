#include "tap/tap_metrics.h"

namespace salttap::tap {

void publish_tap_metrics(Metrics& m, const TapStats& s, const QueueStats& q) {
  using enum MetricId;
  m.counter(tap_read_bytes, s.bytes);
  m.counter(tap_frames, s.frames);
  m.counter(tap_events, s.events);
  m.counter(tap_skipped_frames, {"undecodable"}, s.decode_errors);
  m.counter(tap_skipped_frames, {"oversize"}, s.oversize_frames);
  m.counter(tap_skipped_frames, {"invalid"}, s.invalid_frames);
  m.counter(tap_skipped_frames, {"truncated"}, s.truncated_frames);
  m.counter(tap_skipped_bytes, s.skipped_bytes);
  m.counter(tap_resyncs, s.resyncs);
  m.counter(tap_dropped_events, {"queue_full"}, s.queue_drops);
  m.counter(tap_connects, s.connects);
  m.counter(tap_disconnects, s.disconnects);
  m.counter(tap_connect_failures, s.connect_failures);
  m.gauge(tap_connected, s.connected ? 1 : 0);
  m.gauge(tap_queue_events, static_cast<double>(q.depth));
  m.gauge(tap_queue_bytes, static_cast<double>(q.bytes));
}

}  // namespace salttap::tap
