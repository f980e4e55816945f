#include "tap/event_source.h"

#include "tap/internal/stream_bus_reader.h"
#include "tap/internal/zmq_bus_reader.h"

namespace salttap::tap {

Backoff reconnect_backoff(const ReaderOptions& options) {
  return Backoff({options.backoff_initial, options.backoff_max},
                 options.unit_random ? options.unit_random : system_unit_random());
}

EventSourcePtr make_event_source(const ReaderOptions& options, EventQueue& queue) {
  if (options.endpoint.kind == Endpoint::Kind::zmq) return std::make_unique<ZmqBusReader>(options, queue);
  return std::make_unique<StreamBusReader>(options, queue);
}

}  // namespace salttap::tap
