#include "tap/event_source.h"

#include "tap/stream_bus_reader.h"
#include "tap/zmq_bus_reader.h"

namespace salttap::tap {

EventSourcePtr make_event_source(const ReaderOptions& options, EventQueue& queue) {
  if (options.endpoint.kind == Endpoint::Kind::zmq) return std::make_unique<ZmqBusReader>(options, queue);
  return std::make_unique<StreamBusReader>(options, queue);
}

}  // namespace salttap::tap
