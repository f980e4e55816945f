#pragma once
// The tiny decode limits the decoding targets run each input under, besides
// the production ones: an input of a few hundred bytes reaches every limit.

#include "tap/decode_limits.h"

namespace salttap::fuzz {

inline constexpr tap::DecodeLimits kTinyLimits{.max_frame_bytes = 256, .max_depth = 4, .max_container_items = 8};

}  // namespace salttap::fuzz
