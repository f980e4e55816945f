#pragma once
// FrameDecoder turns the bytes of one connection to master_event_pub.ipc
// (or the TCP pub port) into frames: msgpack maps {"head": {}, "body": ...}.
//
// Salt has shipped two framings on this socket (docs/salt-event-bus.md §3):
//   plain  - maps back to back, no delimiter (2016.3-3006.25, 3007.x, 3008.x)
//   len32  - a 4-byte big-endian length before each map (3006.26+)
// The framing is detected from the first byte of each connection (§3.3) and
// kept for the connection. Corrupt bytes are skipped until the next frame
// signature; an oversize frame is skipped without being buffered. Every byte
// skipped is counted in FrameStats; nothing stops the stream.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "tap/decode_limits.h"
#include "tap/framing.h"
#include "tap/internal/msgpack_scanner.h"

namespace salttap::tap {

// A frame handed over with the buffer that holds it: no copy.
struct OwnedFrame {
  std::string buffer;
  std::size_t offset = 0;  // the frame is buffer[offset, offset + size)
  std::size_t size = 0;
};

class FrameDecoder {
 public:
  // The view handed to the sink is valid only during the call.
  using FrameSink = std::function<void(std::string_view frame)>;
  using OwnedFrameSink = std::function<void(OwnedFrame&& frame)>;

  // Frames of at least `min_size` bytes that had to be gathered across reads
  // go to `sink` with their buffer instead of being copied out of it.
  void set_owned_sink(OwnedFrameSink sink, std::size_t min_size) {
    owned_sink_ = std::move(sink);
    owned_min_ = min_size;
  }

  explicit FrameDecoder(const DecodeLimits& limits = {});

  void feed(std::string_view bytes, const FrameSink& sink);
  // End of the stream (EOF, reconnect): a partial frame is counted as
  // truncated, and the decoder is ready for a new connection.
  void finish();

  Framing framing() const { return framing_; }
  const FrameStats& stats() const { return stats_; }
  std::size_t buffered() const { return pending_.size(); }

 private:
  enum class State { detect, plain, plain_skip, len32, len32_skip, resync };

  std::size_t process(std::string_view span, const FrameSink& sink);
  // Emits the frame span[begin, begin + size); false when it was handed over
  // with pending_ (process() must stop: span no longer belongs to us).
  bool emit(std::string_view span, std::size_t begin, std::size_t size, std::size_t end, const FrameSink& sink);
  bool resync(std::string_view span, std::size_t& cur);
  void skip(std::size_t n) { stats_.skipped_bytes += n; }

  DecodeLimits limits_;
  MsgpackScanner scanner_;
  State state_ = State::detect;
  Framing framing_ = Framing::unknown;
  std::uint64_t skip_base_ = 0;  // plain_skip: frame offset of the span start
  std::uint64_t skip_left_ = 0;  // len32_skip: bytes still to drop
  std::string pending_;          // bytes of an incomplete frame
  std::uint64_t want_ = 0;       // size of the incomplete frame, when its header says
  OwnedFrameSink owned_sink_;
  std::size_t owned_min_ = 0;
  bool handed_over_ = false;
  FrameStats stats_;
};

}  // namespace salttap::tap
