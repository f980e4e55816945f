#pragma once
// ZmqBusReader: Salt 2015.5-2015.8 (era B) publish events on a ZeroMQ PUB
// socket at ipc://<sock_dir>/master_event_pub.ipc; each message is one bare
// event body. libzmq reconnects by itself; we only poll so stop() is prompt.
// A ZeroMQ error (bad endpoint, context failure) starts the whole socket
// over after the common reconnect backoff, slept on options.steady_time.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "tap/event_source.h"
#include "tap/internal/event_decoder.h"

namespace salttap::tap {

class ZmqBusReader final : public EventSource {
 public:
  ZmqBusReader(const ReaderOptions& options, EventQueue& queue);
  ~ZmqBusReader() override;

  void start() override;
  void stop() override;
  const TapStats& stats() const override { return stats_; }
  std::string era() const override { return "2015.5-2015.8 (ZeroMQ bus)"; }

 private:
  void run();
  void sleep_unless_stopped(std::chrono::milliseconds delay);

  ReaderOptions options_;
  EventQueue& queue_;
  TapStats stats_;
  SteadyTime& time_;
  std::mutex stop_mutex_;  // with stop_cv_: stop() wakes the reconnect sleep
  std::condition_variable stop_cv_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace salttap::tap
