#include "tap/tap_metrics.h"

namespace salttap::tap {

void publish_tap_metrics(Metrics& m, const TapStats& s, const QueueStats& q) {
  m.counter("salttap_tap_bytes_total", s.bytes, "Bytes read from the master's event bus");
  m.counter("salttap_tap_frames_total", s.frames, "Frames read");
  m.counter("salttap_tap_events_total", s.events, "Events decoded");
  m.counter("salttap_tap_skipped_frames_total{reason=\"undecodable\"}", s.decode_errors, "Frames skipped, by reason");
  m.counter("salttap_tap_skipped_frames_total{reason=\"oversize\"}", s.oversize_frames);
  m.counter("salttap_tap_skipped_frames_total{reason=\"invalid\"}", s.invalid_frames);
  m.counter("salttap_tap_skipped_frames_total{reason=\"truncated\"}", s.truncated_frames);
  m.counter("salttap_tap_skipped_bytes_total", s.skipped_bytes, "Bytes not delivered in any frame");
  m.counter("salttap_tap_resyncs_total", s.resyncs, "Times the stream was re-found after bad bytes");
  m.counter("salttap_tap_dropped_events_total{reason=\"queue_full\"}", s.queue_drops,
            "Events dropped because the consumer was too slow");
  m.counter("salttap_tap_connects_total", s.connects, "Connections made to the bus");
  m.counter("salttap_tap_disconnects_total", s.disconnects, "Connections lost");
  m.counter("salttap_tap_connect_failures_total", s.connect_failures, "Failed connection attempts");
  m.gauge("salttap_tap_connected", s.connected ? 1 : 0, "1 while connected to the bus");
  m.gauge("salttap_tap_queue_events", static_cast<double>(q.depth), "Events waiting in the tap's queue");
}

}  // namespace salttap::tap
