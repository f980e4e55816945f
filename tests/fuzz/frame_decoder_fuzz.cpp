// libFuzzer target: bytes of one pub-socket connection -> StreamDecoder
// (FrameDecoder + EventDecoder) -> append_event_json.
//
// Input layout:  [mode] [seed] [stream bytes...]   (missing header bytes = 0)
//   mode bits 0-1  how the stream is split into feed() calls:
//                  0 one call, 1 fixed chunks of seed%64+1 bytes,
//                  2 pseudo-random chunks of 1..2*(seed+1) bytes, 3 one byte per call
//   mode bits 2-3  DecodeLimits profile (see limits_for), all far below the
//                  production 128 MiB so the oversize/skip paths are reachable
//   mode bit  4    reconnect: finish() at stream offset size*seed/256 too
//
// Each input is decoded twice: a reference pass (FrameDecoder + EventDecoder
// by hand, each connection fed in one call) that checks per-frame invariants,
// and the split pass through StreamDecoder. Both must give the same events,
// errors and counters: how reads are split must never change the output.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tap/event_to_json.h"
#include "tap/internal/stream_decoder.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using namespace salttap::tap;

struct Options {
  unsigned split = 0;
  std::uint8_t seed = 0;
  DecodeLimits limits;
  std::size_t reconnect_at = std::string_view::npos;
};

DecodeLimits limits_for(unsigned profile) {
  DecodeLimits l;
  switch (profile) {
    case 0:  // production structure limits, small frames
      l.max_frame_bytes = 1u << 20;
      break;
    case 1:
      l.max_frame_bytes = 4096;
      break;
    case 2:  // tiny: nearly every real frame is oversize or over a structural limit
      l.max_frame_bytes = 64;
      l.max_container_items = 8;
      l.max_depth = 4;
      break;
    default:
      l.max_frame_bytes = 1u << 20;
      l.max_container_items = 1024;
      l.max_depth = 16;
      break;
  }
  return l;
}

bool is_map_marker(unsigned char b) { return (b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf; }

// Splits [0, n) into feed() sizes.
class Splitter {
 public:
  explicit Splitter(const Options& o) : split_(o.split), seed_(o.seed), x_(0x9e3779b9u ^ (o.seed * 2654435761u)) {}
  std::size_t next() {
    switch (split_) {
      case 0:
        return std::string_view::npos;
      case 1:
        return seed_ % 64 + 1;
      case 2: {
        x_ ^= x_ << 13;
        x_ ^= x_ >> 17;
        x_ ^= x_ << 5;
        return x_ % (2u * (seed_ + 1u)) + 1;
      }
      default:
        return 1;
    }
  }

 private:
  unsigned split_;
  std::uint8_t seed_;
  std::uint32_t x_;
};

struct Result {
  std::vector<std::string> out;  // "E" + event JSON, or "!" + decode error, in order
  FrameStats frames;
  DecodeStats events;
};

void check_frame_stats_equal(const FrameStats& a, const FrameStats& b) {
  FUZZ_CHECK(a.bytes == b.bytes);
  FUZZ_CHECK(a.frames == b.frames);
  FUZZ_CHECK(a.oversize_frames == b.oversize_frames);
  FUZZ_CHECK(a.invalid_frames == b.invalid_frames);
  FUZZ_CHECK(a.resyncs == b.resyncs);
  FUZZ_CHECK(a.skipped_bytes == b.skipped_bytes);
  FUZZ_CHECK(a.truncated_frames == b.truncated_frames);
}

// Connections of the stream: [0, reconnect_at) and [reconnect_at, end).
std::vector<std::string_view> connections(std::string_view stream, const Options& o) {
  if (o.reconnect_at == std::string_view::npos) return {stream};
  return {stream.substr(0, o.reconnect_at), stream.substr(o.reconnect_at)};
}

// Reference: FrameDecoder and EventDecoder by hand, one feed per connection.
Result reference_pass(std::string_view stream, const Options& o) {
  FrameDecoder frames(o.limits);
  EventDecoder events(o.limits);
  Result r;
  std::uint64_t delivered = 0;  // frame bytes, plus the length prefix of len32 frames
  for (std::string_view conn : connections(stream, o)) {
    frames.feed(conn, [&](std::string_view frame) {
      FUZZ_CHECK(!frame.empty());
      FUZZ_CHECK(frame.size() <= o.limits.max_frame_bytes);
      FUZZ_CHECK(is_map_marker(static_cast<unsigned char>(frame[0])));
      FUZZ_CHECK(frames.framing() != Framing::unknown);
      delivered += frame.size() + (frames.framing() == Framing::len32 ? 4 : 0);
      // The view must lie inside what was fed (fast path) or the decoder's buffer:
      // either way ASan flags a read of freed or foreign memory here.
      std::optional<Event> e;
      {
        salttap::fuzz::HeapPeak heap;
        e = events.decode_frame(frame);
        FUZZ_CHECK(salttap::fuzz::is_linear_heap(heap.growth(), frame.size(), "decode_frame"));
      }
      if (e) {
        FUZZ_CHECK(e->wire_bytes() == frame.size());
        std::string json;
        salttap::tap::append_event_json(json, *e);
        FUZZ_CHECK(salttap::fuzz::is_linear_size(json, e->wire_bytes()));
        FUZZ_CHECK(salttap::fuzz::is_strict_json(json));
        r.out.push_back("E" + json);
      } else {
        FUZZ_CHECK(!events.last_error().empty());
        r.out.push_back("!" + events.last_error());
      }
    });
    FUZZ_CHECK(frames.buffered() <= conn.size());
    frames.finish();
    FUZZ_CHECK(frames.buffered() == 0);
    FUZZ_CHECK(frames.framing() == Framing::unknown);
  }
  const FrameStats& s = frames.stats();
  FUZZ_CHECK(s.bytes == stream.size());
  FUZZ_CHECK(s.skipped_bytes <= s.bytes);
  // Every byte fed is either in a delivered frame (or its length prefix) or skipped.
  FUZZ_CHECK(delivered + s.skipped_bytes == s.bytes);
  FUZZ_CHECK(s.frames == events.stats().events + events.stats().total_errors());
  FUZZ_CHECK(s.resyncs <= s.bytes);
  r.frames = s;
  r.events = events.stats();
  return r;
}

// The production path: StreamDecoder, fed in the pieces the header asks for.
Result split_pass(std::string_view stream, const Options& o) {
  StreamDecoder decoder(o.limits);
  Result r;
  decoder.set_error_sink([&](const std::string& error) {
    FUZZ_CHECK(!error.empty());
    r.out.push_back("!" + error);
  });
  Splitter splitter(o);
  std::uint64_t fed = 0;
  for (std::string_view conn : connections(stream, o)) {
    for (std::size_t off = 0; off < conn.size();) {
      const std::size_t n = std::min(splitter.next(), conn.size() - off);
      decoder.feed(conn.substr(off, n), [&](Event&& e) {
        std::string json;
        append_event_json(json, e);
        r.out.push_back("E" + json);
      });
      off += n;
      fed += n;
      const FrameStats& s = decoder.frames().stats();
      FUZZ_CHECK(s.bytes == fed);
      FUZZ_CHECK(s.skipped_bytes <= s.bytes);
      FUZZ_CHECK(s.frames == decoder.events().stats().events + decoder.events().stats().total_errors());
      // Never more than one frame (plus a msgpack header) is buffered: an
      // oversize frame is skipped, not collected.
      FUZZ_CHECK(decoder.frames().buffered() <= o.limits.max_frame_bytes + 16);
    }
    decoder.finish();
    FUZZ_CHECK(decoder.frames().buffered() == 0);
  }
  r.frames = decoder.frames().stats();
  r.events = decoder.events().stats();
  FUZZ_CHECK(r.frames.frames == r.events.events + r.events.total_errors());
  FUZZ_CHECK(r.frames.skipped_bytes <= r.frames.bytes);
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::uint8_t mode = size > 0 ? data[0] : 0;
  Options o;
  o.seed = size > 1 ? data[1] : 0;
  o.split = mode & 3u;
  o.limits = limits_for((mode >> 2) & 3u);
  const std::size_t header = std::min<std::size_t>(size, 2);
  const std::string_view stream(reinterpret_cast<const char*>(data) + header, size - header);
  if (mode & 0x10) o.reconnect_at = stream.size() * o.seed / 256;

  const Result ref = reference_pass(stream, o);
  const Result split = split_pass(stream, o);

  check_frame_stats_equal(ref.frames, split.frames);
  FUZZ_CHECK(ref.events.events == split.events.events);
  FUZZ_CHECK(ref.events.errors == split.events.errors);
  FUZZ_CHECK(ref.out.size() == split.out.size());
  for (std::size_t i = 0; i < ref.out.size(); ++i) FUZZ_CHECK(ref.out[i] == split.out[i]);
  return 0;
}
