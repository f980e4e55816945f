#include "tap/internal/msgpack_scanner.h"

#include <cstring>

namespace salttap::tap {
namespace {

std::uint64_t be(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// What one header says: its own size, the size of the payload that follows,
// and how many child objects follow (maps count keys and values).
struct Header {
  int header_bytes;       // including the type byte; -1 = invalid
  int length_bytes;       // big-endian length field after the type byte (0 = none)
  std::uint64_t payload;  // fixed payload when length_bytes == 0
  int extra;              // bytes between length and payload (ext type byte)
  enum Kind { scalar, blob, array, map } kind;
};

Header classify(unsigned char b) {
  if (b <= 0x7f || b >= 0xe0) return {1, 0, 0, 0, Header::scalar};
  if (b <= 0x8f) return {1, 0, std::uint64_t(b & 0x0f), 0, Header::map};
  if (b <= 0x9f) return {1, 0, std::uint64_t(b & 0x0f), 0, Header::array};
  if (b <= 0xbf) return {1, 0, std::uint64_t(b & 0x1f), 0, Header::blob};
  switch (b) {
    case 0xc0:
    case 0xc2:
    case 0xc3:
      return {1, 0, 0, 0, Header::scalar};
    case 0xc4:
      return {2, 1, 0, 0, Header::blob};
    case 0xc5:
      return {3, 2, 0, 0, Header::blob};
    case 0xc6:
      return {5, 4, 0, 0, Header::blob};
    case 0xc7:
      return {3, 1, 0, 1, Header::blob};
    case 0xc8:
      return {4, 2, 0, 1, Header::blob};
    case 0xc9:
      return {6, 4, 0, 1, Header::blob};
    case 0xca:
      return {1, 0, 4, 0, Header::blob};
    case 0xcb:
      return {1, 0, 8, 0, Header::blob};
    case 0xcc:
    case 0xd0:
      return {1, 0, 1, 0, Header::blob};
    case 0xcd:
    case 0xd1:
      return {1, 0, 2, 0, Header::blob};
    case 0xce:
    case 0xd2:
      return {1, 0, 4, 0, Header::blob};
    case 0xcf:
    case 0xd3:
      return {1, 0, 8, 0, Header::blob};
    case 0xd4:
      return {1, 0, 2, 0, Header::blob};
    case 0xd5:
      return {1, 0, 3, 0, Header::blob};
    case 0xd6:
      return {1, 0, 5, 0, Header::blob};
    case 0xd7:
      return {1, 0, 9, 0, Header::blob};
    case 0xd8:
      return {1, 0, 17, 0, Header::blob};
    case 0xd9:
      return {2, 1, 0, 0, Header::blob};
    case 0xda:
      return {3, 2, 0, 0, Header::blob};
    case 0xdb:
      return {5, 4, 0, 0, Header::blob};
    case 0xdc:
      return {3, 2, 0, 0, Header::array};
    case 0xdd:
      return {5, 4, 0, 0, Header::array};
    case 0xde:
      return {3, 2, 0, 0, Header::map};
    case 0xdf:
      return {5, 4, 0, 0, Header::map};
    default:
      return {-1, 0, 0, 0, Header::scalar};  // 0xc1: never used
  }
}

}  // namespace

void MsgpackScanner::consumed_item(std::uint64_t children) {
  if (!remaining_.empty()) --remaining_.back();
  if (children > 0) remaining_.push_back(children);
  while (!remaining_.empty() && remaining_.back() == 0) remaining_.pop_back();
}

ScanResult MsgpackScanner::scan(std::string_view data, std::uint64_t base) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const std::uint64_t limit = base + data.size();
  for (;;) {
    // A blob's payload may end beyond the bytes we have: pos_ > limit.
    if (pos_ > limit) return {ScanStatus::need_more, pos_};
    if (started_ && remaining_.empty()) return {ScanStatus::complete, pos_};
    if (pos_ == limit) return {ScanStatus::need_more, pos_};
    const unsigned char* p = bytes + (pos_ - base);
    const Header h = classify(*p);
    if (h.header_bytes < 0) return {ScanStatus::invalid, pos_};
    if (pos_ + std::uint64_t(h.header_bytes) > limit) return {ScanStatus::need_more, pos_};

    std::uint64_t n = h.length_bytes ? be(p + 1, h.length_bytes) : h.payload;
    std::uint64_t children = 0;
    std::uint64_t skip = h.header_bytes;
    switch (h.kind) {
      case Header::scalar:
        break;
      case Header::blob:
        skip += n;
        break;
      case Header::array:
      case Header::map:
        if (n > limits_.max_container_items) return {ScanStatus::invalid, pos_};
        children = h.kind == Header::map ? 2 * n : n;
        if (children > 0 && remaining_.size() >= limits_.max_depth) return {ScanStatus::invalid, pos_};
        break;
    }
    pos_ += skip;
    started_ = true;
    consumed_item(children);
    if (pos_ > max_size_) return {ScanStatus::too_large, pos_};
  }
}

}  // namespace salttap::tap
