#pragma once
// StreamBusReader: master_event_pub.ipc (AF_UNIX) or the TCP pub port,
// read with Boost.Asio on a dedicated thread. Never writes to the socket:
// 3007+ publishers would try to parse anything sent to them.

#include <mutex>
#include <thread>
#include <vector>

#include "common/asio.h"

#include "tap/event_source.h"
#include "tap/internal/salt_era.h"
#include "tap/internal/spill_gate.h"
#include "tap/internal/stream_decoder.h"

namespace salttap::tap {

class StreamBusReader final : public EventSource {
 public:
  StreamBusReader(const ReaderOptions& options, EventQueue& queue);
  ~StreamBusReader() override;

  void start() override;
  void stop() override;
  const TapStats& stats() const override { return stats_; }
  std::string era() const override;

 private:
  void connect();
  void on_connected();
  void read();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  void schedule_reconnect();
  void publish_decoder_stats();
  void observe(const Event& event);
  void note_framing();

  ReaderOptions options_;
  TapStats stats_;
  boost::asio::io_context io_;
  boost::asio::generic::stream_protocol::socket socket_{io_};
  boost::asio::steady_timer timer_{io_};
  std::thread thread_;

  StreamDecoder decoder_;
  SpillGate gate_;
  std::vector<char> buf_;
  std::vector<Event> batch_;
  Backoff backoff_;  // reconnect delays; reset once connected
  std::uint64_t failed_attempts_ = 0;
  std::uint64_t connection_events_ = 0;
  bool first_read_ = true;
  bool logged_framing_ = false;
  std::chrono::steady_clock::time_point last_drop_log_{};
  std::uint64_t drops_since_log_ = 0;

  SaltEraDetector detector_;
  std::string_view published_era_;  // reader thread only
  mutable std::mutex era_mutex_;
  std::string era_;
};

}  // namespace salttap::tap
