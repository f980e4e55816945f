#pragma once
// MsgpackScanner finds where one msgpack object ends in a byte stream without
// building it, and can resume when more bytes arrive.
//
// Why hand-written: msgpack-c's unpacker only reports an object once it is
// complete and buffered, so it can neither tell us that a frame is oversize
// before buffering it, nor skip an oversize frame while discarding its bytes.
// This scanner reads headers only (a bin body is one jump), so resuming it
// after every socket read costs nothing, and a frame over the limit is
// detected at its first header that says so.

#include <cstdint>
#include <string_view>
#include <vector>

#include "tap/decode_limits.h"

namespace salttap::tap {

enum class ScanStatus {
  complete,   // the object ends at `end`
  need_more,  // feed more bytes (same prefix, longer)
  invalid,    // byte 0xc1, or a container over max_container_items / max_depth
  too_large,  // the object is longer than the size limit (`end` = known end so far)
};

struct ScanResult {
  ScanStatus status;
  std::uint64_t end;  // offset from the object's first byte
};

class MsgpackScanner {
 public:
  MsgpackScanner(const DecodeLimits& limits, std::uint64_t max_size) : limits_(limits), max_size_(max_size) {}

  // `data` holds object bytes [base, base + data.size()). Bytes before pos()
  // are never looked at again, so a caller may discard them (skip mode).
  [[nodiscard]] ScanResult scan(std::string_view data, std::uint64_t base = 0);

  std::uint64_t pos() const { return pos_; }
  void set_max_size(std::uint64_t max_size) { max_size_ = max_size; }
  void reset() {
    pos_ = 0;
    started_ = false;
    remaining_.clear();
  }

 private:
  void consumed_item(std::uint64_t children);

  DecodeLimits limits_;
  std::uint64_t max_size_;
  std::uint64_t pos_ = 0;
  bool started_ = false;
  std::vector<std::uint64_t> remaining_;  // items left in each open container
};

}  // namespace salttap::tap
