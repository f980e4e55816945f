#include "tap/internal/frame_decoder.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include "common/enum_names.h"

namespace salttap::tap {
namespace {

bool is_map_marker(unsigned char b) { return (b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf; }

std::uint32_t be32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t(u[0]) << 24) | (std::uint32_t(u[1]) << 16) | (std::uint32_t(u[2]) << 8) | u[3];
}

// A frame starts with a small fixmap whose first key is the 4-char string
// "head" or "body" (Python 2 masters often put "body" first). str and raw
// share the fixstr marker 0xa4.
bool is_signature(const char* p) {
  const auto b0 = static_cast<unsigned char>(p[0]);
  return b0 >= 0x81 && b0 <= 0x8f && static_cast<unsigned char>(p[1]) == 0xa4 &&
         (std::memcmp(p + 2, "head", 4) == 0 || std::memcmp(p + 2, "body", 4) == 0);
}
constexpr std::size_t kSignatureLen = 6;

// {"head": {}, "body": bin} packed by msgpack-python with use_bin_type=True:
// 82 a4 "head" 80 a4 "body" c4|c5|c6 <len>. Returns the whole frame's size,
// or 0 when the bytes are not (yet) in that form: the scanner then decides.
std::size_t canonical_frame_size(std::string_view s) {
  // Spelled out: a string literal "\xa4body" would read \xa4b as one escape.
  static constexpr char kPrefix[] = {'\x82', '\xa4', 'h', 'e', 'a', 'd', '\x80', '\xa4', 'b', 'o', 'd', 'y'};
  constexpr std::size_t kPrefixLen = sizeof(kPrefix);  // 12
  if (s.size() < kPrefixLen + 5 || std::memcmp(s.data(), kPrefix, kPrefixLen) != 0) return 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + kPrefixLen;
  switch (p[0]) {
    case 0xc4:
      return kPrefixLen + 2 + p[1];
    case 0xc5:
      return kPrefixLen + 3 + ((std::size_t(p[1]) << 8) | p[2]);
    case 0xc6:
      return kPrefixLen + 5 + ((std::size_t(p[1]) << 24) | (std::size_t(p[2]) << 16) | (std::size_t(p[3]) << 8) | p[4]);
    default:
      return 0;
  }
}

}  // namespace

std::string_view to_string(Framing f) { return enumerator_name(f, "unknown"); }

FrameStats& FrameStats::operator+=(const FrameStats& o) {
  bytes += o.bytes;
  frames += o.frames;
  oversize_frames += o.oversize_frames;
  invalid_frames += o.invalid_frames;
  resyncs += o.resyncs;
  skipped_bytes += o.skipped_bytes;
  truncated_frames += o.truncated_frames;
  return *this;
}

FrameDecoder::FrameDecoder(const DecodeLimits& limits) : limits_(limits), scanner_(limits, limits.max_frame_bytes) {}

void FrameDecoder::feed(std::string_view bytes, const FrameSink& sink) {
  stats_.bytes += bytes.size();
  want_ = 0;
  if (pending_.empty()) {
    // Fast path: frames that lie whole inside this read are never copied.
    const std::size_t used = process(bytes, sink);
    pending_.assign(bytes.substr(used));
  } else {
    pending_.append(bytes);
    for (;;) {
      const std::size_t used = process(pending_, sink);
      if (!handed_over_) {
        pending_.erase(0, used);
        break;
      }
      handed_over_ = false;  // pending_ now holds only what followed that frame
    }
  }
  // A large frame's size is known from its header: reserve it all now.
  if (want_ > pending_.capacity()) pending_.reserve(want_);
}

void FrameDecoder::finish() {
  const bool mid_frame = !pending_.empty() || state_ == State::plain_skip || state_ == State::len32_skip;
  if (mid_frame && state_ != State::resync && state_ != State::detect) ++stats_.truncated_frames;
  skip(pending_.size());
  pending_.clear();
  pending_.shrink_to_fit();
  scanner_.reset();
  scanner_.set_max_size(limits_.max_frame_bytes);
  state_ = State::detect;
  framing_ = Framing::unknown;
}

bool FrameDecoder::resync(std::string_view span, std::size_t& cur) {
  for (std::size_t i = cur; i + kSignatureLen <= span.size(); ++i) {
    // Jump to the next 0xa4 (the key marker); the map marker sits before it.
    const void* hit = std::memchr(span.data() + i + 1, 0xa4, span.size() - i - 1);
    if (hit == nullptr) break;
    i = static_cast<std::size_t>(static_cast<const char*>(hit) - span.data()) - 1;
    if (i + kSignatureLen > span.size()) break;
    if (!is_signature(span.data() + i)) continue;
    std::size_t start = i;
    Framing framing = framing_;
    if (framing == Framing::unknown) {
      framing = (i >= cur + 4 && span[i - 4] == 0) ? Framing::len32 : Framing::plain;
    }
    if (framing == Framing::len32) {
      if (i < cur + 4) continue;  // its length prefix was already rejected
      start = i - 4;
    }
    skip(start - cur);
    cur = start;
    framing_ = framing;
    state_ = framing == Framing::plain ? State::plain : State::len32;
    ++stats_.resyncs;
    return true;
  }
  // Keep a tail that may hold the start of a signature (and its length prefix).
  const std::size_t keep = std::min<std::size_t>(span.size() - cur, kSignatureLen + 4 - 1);
  const std::size_t drop = span.size() - cur - keep;
  skip(drop);
  cur += drop;
  return false;
}

bool FrameDecoder::emit(std::string_view span, std::size_t begin, std::size_t size, std::size_t end,
                        const FrameSink& sink) {
  ++stats_.frames;
  if (!owned_sink_ || size < owned_min_ || span.data() != pending_.data()) {
    sink(span.substr(begin, size));
    return true;
  }
  OwnedFrame frame{std::string(span.substr(end)), begin, size};  // keep the bytes after it
  std::swap(frame.buffer, pending_);
  handed_over_ = true;
  owned_sink_(std::move(frame));
  return false;
}

std::size_t FrameDecoder::process(std::string_view span, const FrameSink& sink) {
  std::size_t cur = 0;
  for (;;) {
    switch (state_) {
      case State::detect: {
        if (cur == span.size()) return cur;
        const auto b = static_cast<unsigned char>(span[cur]);
        if (is_map_marker(b)) {
          framing_ = Framing::plain;
          state_ = State::plain;
        } else if (b == 0) {
          framing_ = Framing::len32;
          state_ = State::len32;
        } else {
          state_ = State::resync;
        }
        break;
      }
      case State::plain: {
        if (cur == span.size()) return cur;
        if (scanner_.pos() == 0 && !is_map_marker(static_cast<unsigned char>(span[cur]))) {
          state_ = State::resync;
          break;
        }
        if (scanner_.pos() == 0) {
          // Fast path: the exact header every Python 3 Salt writes.
          if (const std::size_t n = canonical_frame_size(span.substr(cur)); n != 0 && n <= limits_.max_frame_bytes) {
            if (span.size() - cur < n) {
              want_ = n;  // let feed() size the buffer once instead of regrowing it per read
              return cur;
            }
            if (!emit(span, cur, n, cur + n, sink)) return 0;
            cur += n;
            break;
          }
        }
        const ScanResult r = scanner_.scan(span.substr(cur));
        switch (r.status) {
          case ScanStatus::complete:
            scanner_.reset();
            if (!emit(span, cur, r.end, cur + r.end, sink)) return 0;
            cur += r.end;
            break;
          case ScanStatus::need_more:
            return cur;
          case ScanStatus::invalid:
            ++stats_.invalid_frames;
            scanner_.reset();
            skip(1);
            ++cur;
            state_ = State::resync;
            break;
          case ScanStatus::too_large:
            scanner_.set_max_size(std::numeric_limits<std::uint64_t>::max());
            skip_base_ = 0;
            state_ = State::plain_skip;
            break;
        }
        break;
      }
      case State::plain_skip: {
        const ScanResult r = scanner_.scan(span.substr(cur), skip_base_);
        if (r.status == ScanStatus::complete || r.status == ScanStatus::invalid) {
          const std::uint64_t end = r.status == ScanStatus::complete ? r.end : scanner_.pos() + 1;
          const std::size_t n = std::min<std::uint64_t>(end - skip_base_, span.size() - cur);
          skip(n);
          cur += n;
          if (r.status == ScanStatus::complete)
            ++stats_.oversize_frames;
          else
            ++stats_.invalid_frames;
          scanner_.reset();
          scanner_.set_max_size(limits_.max_frame_bytes);
          state_ = r.status == ScanStatus::complete ? State::plain : State::resync;
          break;
        }
        // Drop what the scanner is past; keep only bytes it has yet to read.
        const std::size_t n = std::min<std::uint64_t>(scanner_.pos() - skip_base_, span.size() - cur);
        skip(n);
        skip_base_ += n;
        cur += n;
        return cur;
      }
      case State::len32: {
        if (span.size() - cur < 5) return cur;  // length + the map marker after it
        const std::uint32_t n = be32(span.data() + cur);
        if (n == 0 || !is_map_marker(static_cast<unsigned char>(span[cur + 4]))) {
          ++stats_.invalid_frames;
          skip(1);
          ++cur;
          state_ = State::resync;
          break;
        }
        if (n > limits_.max_frame_bytes) {
          skip_left_ = 4ull + n;
          state_ = State::len32_skip;
          break;
        }
        if (span.size() - cur < 4ull + n) {
          want_ = 4ull + n;
          return cur;
        }
        if (!emit(span, cur + 4, n, cur + 4 + n, sink)) return 0;
        cur += 4ull + n;
        break;
      }
      case State::len32_skip: {
        const std::size_t n = std::min<std::uint64_t>(skip_left_, span.size() - cur);
        skip(n);
        cur += n;
        skip_left_ -= n;
        if (skip_left_ > 0) return cur;
        ++stats_.oversize_frames;
        state_ = State::len32;
        break;
      }
      case State::resync:
        if (!resync(span, cur)) return cur;
        break;
    }
  }
}

}  // namespace salttap::tap
