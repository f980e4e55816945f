#pragma once
// Counters of one event source, readable from any thread (metrics, logs).

#include <atomic>
#include <cstdint>

#include "tap/framing.h"

namespace salttap::tap {

struct TapStats {
  std::atomic<std::uint64_t> connects{0};          // successful connections
  std::atomic<std::uint64_t> disconnects{0};       // connections lost (EOF, reset)
  std::atomic<std::uint64_t> connect_failures{0};  // refused, no such socket
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> frames{0};
  std::atomic<std::uint64_t> events{0};
  std::atomic<std::uint64_t> decode_errors{0};  // frames that did not decode
  std::atomic<std::uint64_t> oversize_frames{0};
  std::atomic<std::uint64_t> invalid_frames{0};
  std::atomic<std::uint64_t> truncated_frames{0};
  std::atomic<std::uint64_t> resyncs{0};
  std::atomic<std::uint64_t> skipped_bytes{0};
  std::atomic<std::uint64_t> queue_drops{0};  // events dropped: consumer too slow
  std::atomic<bool> connected{false};
  std::atomic<Framing> framing{Framing::unknown};
};

}  // namespace salttap::tap
