#pragma once
// Every event of one real capture (tests/captures/<salt>/<scenario>.raw), decoded.

#include <string>
#include <vector>

#include "tap/capture_file.h"
#include "tap/event.h"
#include "tests/support/captures.h"

namespace salttap::testing {

// `name`: "<salt>/<scenario>.raw", relative to the captures folder.
inline std::vector<tap::Event> capture_events(const std::string& name) {
  std::vector<tap::Event> out;
  tap::CaptureStats stats;
  tap::read_capture((captures_dir() / name).string(), {}, [&](tap::Event&& e) { out.push_back(std::move(e)); }, stats);
  return out;
}

}  // namespace salttap::testing
