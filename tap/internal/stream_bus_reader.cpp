#include "tap/internal/stream_bus_reader.h"

#include <cerrno>

#include "common/access_advice.h"
#include "common/log.h"
#include "common/thread_name.h"

namespace salttap::tap {
namespace asio = boost::asio;

namespace {

constexpr std::uint64_t kMaxLoggedDecodeErrors = 20;
constexpr auto kDropLogInterval = std::chrono::seconds(10);
constexpr std::uint64_t kConnectFailureLogEvery = 50;

asio::generic::stream_protocol::endpoint to_asio(const Endpoint& e) {
  if (e.kind == Endpoint::Kind::tcp) return asio::ip::tcp::endpoint(asio::ip::make_address(e.host), e.port);
  return asio::local::stream_protocol::endpoint(e.path);
}

}  // namespace

StreamBusReader::StreamBusReader(const ReaderOptions& options, EventQueue& queue)
    : options_(options),
      decoder_(options.limits),
      gate_(queue),
      buf_(options.read_chunk),
      backoff_(reconnect_backoff(options)) {
  if (options_.endpoint.kind == Endpoint::Kind::tcp) asio::ip::make_address(options_.endpoint.host);  // throws early
  std::uint64_t logged = 0;
  decoder_.set_error_sink([logged](const std::string& why) mutable {
    if (logged++ < kMaxLoggedDecodeErrors) log::warn("tap: skipped an undecodable frame: {}", why);
  });
  decoder_.set_divert([this](std::string_view frame) {
    if (!gate_.divert(frame, JournalRecordKind::frame, batch_)) return false;
    ++connection_events_;
    note_framing();  // a spilled frame is decoded later, by the consumer
    return true;
  });
}

StreamBusReader::~StreamBusReader() { stop(); }

void StreamBusReader::start() {
  asio::post(io_, [this] { connect(); });
  thread_ = std::thread([this] {
    name_this_thread("tap-reader");
    io_.run();
  });
}

void StreamBusReader::stop() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
  boost::system::error_code ec;
  socket_.close(ec);
}

std::string StreamBusReader::era() const {
  std::lock_guard lock(era_mutex_);
  return era_;
}

void StreamBusReader::connect() {
  boost::system::error_code ec;
  socket_.close(ec);
  socket_ = asio::generic::stream_protocol::socket(io_);
  socket_.async_connect(to_asio(options_.endpoint), [this](const boost::system::error_code& err) {
    if (!err) return on_connected();
    ++stats_.connect_failures;
    if (failed_attempts_++ % kConnectFailureLogEvery != 0) return schedule_reconnect();
    // Permission denied does not mend itself by retrying: say which path
    // refuses and what to change (still retrying: a chmod or an ACL made
    // while salttap runs takes effect at the next attempt; a new group only
    // at a restart, since a process keeps the groups it started with).
    if (err == asio::error::access_denied && options_.endpoint.kind == Endpoint::Kind::unix_socket)
      log::error("tap: {}; retrying", access_advice(options_.endpoint.path, EACCES, "connect to the master's bus at"));
    else
      log::warn("tap: cannot connect to {}: {}; retrying", options_.endpoint.describe(), err.message());
    schedule_reconnect();
  });
}

void StreamBusReader::on_connected() {
  const bool reconnect = stats_.connects++ > 0;
  stats_.connected = true;
  log::info("tap: {} to {}{}", reconnect ? "reconnected" : "connected", options_.endpoint.describe(),
            failed_attempts_ ? fmt::format(" after {} failed attempts", failed_attempts_) : "");
  failed_attempts_ = 0;
  backoff_.reset();
  connection_events_ = 0;
  first_read_ = true;
  logged_framing_ = false;
  read();
}

void StreamBusReader::read() {
  socket_.async_read_some(asio::buffer(buf_),
                          [this](const boost::system::error_code& ec, std::size_t n) { on_read(ec, n); });
}

void StreamBusReader::note_framing() {
  // The framing is known once the connection's first frame is out.
  if (logged_framing_) return;
  logged_framing_ = true;
  const Framing f = decoder_.frames().framing();
  stats_.framing = f;
  detector_.set_framing(f);
  log::info("tap: {} framing={}", options_.endpoint.describe(), to_string(f));
}

void StreamBusReader::observe(const Event& event) {
  note_framing();
  detector_.observe(event);
  const std::string_view text = detector_.describe();
  if (text == published_era_) return;  // the common case: no lock per event
  published_era_ = text;
  log::info("tap: salt release on {}: {}", options_.endpoint.describe(), text);
  std::lock_guard lock(era_mutex_);
  era_ = text;
}

void StreamBusReader::on_read(const boost::system::error_code& ec, std::size_t n) {
  if (n > 0) {
    if (first_read_ && static_cast<unsigned char>(buf_[0]) == 0xff)
      log::error("tap: {} sent a ZeroMQ greeting: this is a Salt 2015.x bus, use --zmq ipc://{}",
                 options_.endpoint.describe(), options_.endpoint.path);
    first_read_ = false;
    gate_.begin();
    decoder_.feed(std::string_view(buf_.data(), n), [this](Event&& e) {
      observe(e);
      ++connection_events_;
      batch_.push_back(std::move(e));
    });
    if (const std::size_t dropped = gate_.end(batch_)) {
      stats_.queue_drops += dropped;
      drops_since_log_ += dropped;
      const auto now = std::chrono::steady_clock::now();
      if (now - last_drop_log_ >= kDropLogInterval) {
        log::error("tap: consumer too slow: dropped {} events (queue full); {} dropped in total", drops_since_log_,
                   stats_.queue_drops.load());
        last_drop_log_ = now;
        drops_since_log_ = 0;
      }
    }
    publish_decoder_stats();
  }
  if (!ec) return read();

  ++stats_.disconnects;
  stats_.connected = false;
  decoder_.finish();  // counts a torn frame; the decoder is ready for the next connection
  publish_decoder_stats();
  log::warn("tap: connection to {} lost ({}) after {} events; will reconnect", options_.endpoint.describe(),
            ec == asio::error::eof ? "closed by the master" : ec.message(), connection_events_);
  schedule_reconnect();
}

void StreamBusReader::publish_decoder_stats() {
  const FrameStats& f = decoder_.frames().stats();
  stats_.bytes = f.bytes;
  stats_.frames = f.frames;
  stats_.oversize_frames = f.oversize_frames;
  stats_.invalid_frames = f.invalid_frames;
  stats_.truncated_frames = f.truncated_frames;
  stats_.resyncs = f.resyncs;
  stats_.skipped_bytes = f.skipped_bytes;
  stats_.events = decoder_.events().stats().events;
  stats_.decode_errors = decoder_.events().stats().total_errors();
}

void StreamBusReader::schedule_reconnect() {
  timer_.expires_after(backoff_.next());
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) connect();
  });
}

}  // namespace salttap::tap
