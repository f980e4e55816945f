#include "tap/internal/zmq_bus_reader.h"

#include <zmq.hpp>

#include "common/log.h"
#include "common/thread_name.h"
#include "tap/internal/spill_gate.h"

namespace salttap::tap {
namespace {
constexpr int kPollMs = 200;
constexpr int kReceiveHighWaterMark = 100'000;  // Salt's own SUB uses 2000
constexpr std::size_t kMaxBatch = 4096;
constexpr std::uint64_t kMaxLoggedDecodeErrors = 20;
}  // namespace

ZmqBusReader::ZmqBusReader(const ReaderOptions& options, EventQueue& queue)
    : options_(options), queue_(queue), time_(options.steady_time ? *options.steady_time : real_steady_time()) {}

ZmqBusReader::~ZmqBusReader() { stop(); }

void ZmqBusReader::start() {
  thread_ = std::thread([this] {
    name_this_thread("tap-reader");
    run();
  });
}

void ZmqBusReader::stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ZmqBusReader::sleep_unless_stopped(std::chrono::milliseconds delay) {
  std::unique_lock lock(stop_mutex_);
  time_.wait_for(lock, stop_cv_, delay, [this] { return stopping_.load(); });
}

void ZmqBusReader::run() {
  EventDecoder decoder(options_.limits);
  SpillGate gate(queue_);
  std::vector<Event> batch;
  std::uint64_t logged_errors = 0;
  Backoff backoff = reconnect_backoff(options_);
  while (!stopping_) {
    try {
      zmq::context_t context(1);
      zmq::socket_t sub(context, zmq::socket_type::sub);
      sub.set(zmq::sockopt::linger, 0);
      sub.set(zmq::sockopt::rcvhwm, kReceiveHighWaterMark);
      sub.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(options_.limits.max_frame_bytes));
      sub.set(zmq::sockopt::subscribe, "");
      sub.connect(options_.endpoint.path);
      backoff.reset();
      ++stats_.connects;
      stats_.connected = true;
      log::info("tap: subscribed to {} (ZeroMQ, Salt 2015.x framing)", options_.endpoint.describe());
      zmq::pollitem_t items[] = {{sub.handle(), 0, ZMQ_POLLIN, 0}};
      while (!stopping_) {
        zmq::poll(items, 1, std::chrono::milliseconds(kPollMs));
        if (!(items[0].revents & ZMQ_POLLIN)) continue;
        zmq::message_t msg;
        gate.begin();
        std::size_t taken = 0;
        while (taken++ < kMaxBatch && sub.recv(msg, zmq::recv_flags::dontwait)) {
          stats_.bytes += msg.size();
          ++stats_.frames;
          const std::string_view body(static_cast<const char*>(msg.data()), msg.size());
          if (gate.divert(body, JournalRecordKind::body, batch)) continue;  // decoded when drained
          if (auto event = decoder.decode_body(body)) {
            ++stats_.events;
            batch.push_back(std::move(*event));
          } else {
            ++stats_.decode_errors;
            if (logged_errors++ < kMaxLoggedDecodeErrors)
              log::warn("tap: skipped an undecodable ZeroMQ message: {}", decoder.last_error());
          }
        }
        stats_.queue_drops += gate.end(batch);
      }
      stats_.connected = false;
    } catch (const zmq::error_t& e) {
      stats_.connected = false;
      ++stats_.connect_failures;
      log::warn("tap: ZeroMQ error on {}: {}; retrying", options_.endpoint.describe(), e.what());
      sleep_unless_stopped(backoff.next());
    }
  }
}

}  // namespace salttap::tap
