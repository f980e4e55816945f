#pragma once
// `salttap replay FILE... --output events`: decode captures and print one
// JSON object per event, in stream order (same output as `watch --format json`).

#include <cstdio>
#include <string>
#include <vector>

#include "tap/decode_limits.h"

namespace salttap::service {

struct ReplayOptions {
  std::vector<std::string> files;
  std::string output = "events";
  tap::DecodeLimits limits;
};

// Returns the process exit code: 0 when every file was read (bad frames are
// counted and reported on stderr, not fatal), 1 when a file could not be read.
int run_replay(const ReplayOptions& options, std::FILE* out);

}  // namespace salttap::service
