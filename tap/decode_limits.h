#pragma once
// Explicit limits for everything read from the master's event bus.
// msgpack-c's own defaults are effectively unlimited; a corrupt length must
// never make us allocate gigabytes, so every decode path takes these.

#include <cstddef>
#include <cstdint>

namespace salttap::tap {

struct DecodeLimits {
  // Largest frame accepted. Salt's own readers allow 100 MiB (Tornado's
  // max_buffer_size, msgpack>=1.0's default); a return above max_event_size
  // is trimmed by Salt, but the trimmer may give up, so stay generous.
  std::uint64_t max_frame_bytes = 128ull << 20;
  std::uint32_t max_depth = 256;                  // nesting of maps/arrays
  std::uint32_t max_container_items = 16u << 20;  // entries in one map or array
};

}  // namespace salttap::tap
