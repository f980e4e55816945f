#pragma once
// EventSource: reads the master's event bus on its own thread and hands
// events to an EventQueue. Implementations:
//   StreamBusReader - Unix stream socket or TCP (Salt 2016.3+), both framings
//   ZmqBusReader    - ZeroMQ SUB (Salt 2015.x)
// The reader never blocks on downstream work, reconnects with the common
// backoff (common/backoff.h: full jitter, restarted after each successful
// connect) when the master goes away, and logs which framing and Salt era it sees.

#include <chrono>
#include <memory>
#include <string>

#include "common/backoff.h"
#include "common/steady_time.h"
#include "tap/decode_limits.h"
#include "tap/endpoint.h"
#include "tap/event_queue.h"
#include "tap/tap_stats.h"

namespace salttap::tap {

struct ReaderOptions {
  Endpoint endpoint;
  DecodeLimits limits;
  std::chrono::milliseconds backoff_initial{100};  // reconnect delays: BackoffPolicy{initial, max}
  std::chrono::milliseconds backoff_max{5000};
  UnitRandom unit_random;  // reconnect jitter; empty: system_unit_random()
  // The ZeroMQ reader's reconnect sleep runs on it (the stream reader's is an
  // Asio timer on the io_context). nullptr: real time.
  SteadyTime* steady_time = nullptr;
  std::size_t read_chunk = std::size_t{256} * 1024;
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

// The readers' reconnect backoff, from the options.
Backoff reconnect_backoff(const ReaderOptions& options);

EventSourcePtr make_event_source(const ReaderOptions& options, EventQueue& queue);

}  // namespace salttap::tap
