#pragma once
// EventSource: reads the master's event bus on its own thread and hands
// events to an EventQueue. Implementations:
//   StreamBusReader - Unix stream socket or TCP (Salt 2016.3+), both framings
//   ZmqBusReader    - ZeroMQ SUB (Salt 2015.x)
// The reader never blocks on downstream work, reconnects with backoff when
// the master goes away, and logs which framing and Salt era it sees.

#include <chrono>
#include <memory>
#include <string>

#include "tap/decode_limits.h"
#include "tap/endpoint.h"
#include "tap/event_queue.h"
#include "tap/tap_stats.h"

namespace salttap::tap {

struct ReaderOptions {
  Endpoint endpoint;
  DecodeLimits limits;
  std::chrono::milliseconds backoff_initial{100};
  std::chrono::milliseconds backoff_max{5000};
  std::size_t read_chunk = 256 * 1024;
};

class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual void start() = 0;
  virtual void stop() = 0;  // idempotent; joins the reader thread
  virtual const TapStats& stats() const = 0;
  virtual std::string era() const = 0;  // what the stream says about the Salt release
};
using EventSourcePtr = std::unique_ptr<EventSource>;

EventSourcePtr make_event_source(const ReaderOptions& options, EventQueue& queue);

}  // namespace salttap::tap
