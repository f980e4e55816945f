#pragma once
// `salttap replay FILE...`: decode captures and print, in stream order,
//   --output events  one JSON object per event (same as `watch --format json`)
//   --output jobs    one JSON object per settled job (correlator/job_json.h),
//                    on the events' own time (_stamp); at the end every open
//                    job is settled as if its deadline had passed.
//   --output documents  the bulk NDJSON (action + source lines) the indexer
//                    would spool for these events (docs/documents.md).
//   --ship           the same documents through the indexer's real path
//                    (spool, setup, bulk shipper) to the configured engine;
//                    waits until the engine acknowledged all of them.

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/internal/command.h"
#include "config/config.h"
#include "tap/decode_limits.h"

namespace salttap::cli {

struct ReplayOptions {
  std::vector<std::string> files;
  std::string output = "events";  // events | jobs | documents
  tap::DecodeLimits limits;
  config::Config config = config::default_config();  // correlator, audit and redaction settings
  bool ship = false;
  std::chrono::milliseconds ship_timeout{300000};  // for the engine to acknowledge everything
};

// 0 when every file was read (bad frames are counted and reported on stderr,
// not fatal); 1 when a file could not be read.
int run_replay(const ReplayOptions& options, std::FILE* out);

// Registers `replay` on `app`; --config goes to `config_path`.
Command add_replay_command(CLI::App& app, std::string& config_path);

}  // namespace salttap::cli
