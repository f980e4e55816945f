#pragma once
// The flags of the commands that read the indices (jobs, jobs show, minions,
// ui): salttap's config and the master config, whose `elasticsearch:` block
// names the engine when salttap's config has no `indexer:` section. The
// engine is then found as `run` finds it.

#include <cstdio>
#include <string>

#include "cli/internal/history_output.h"
#include "config/config.h"
#include "indexer/indexer_config.h"
#include "tap/master_config.h"

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's own namespace
class App;
}

namespace salttap::cli {

struct EngineFlags {
  std::string master_config = tap::kDefaultMasterConfig;
  bool master_config_given = false;
};

// --config (described by `config_help`) and --master-config.
void add_engine_flags(CLI::App& command, std::string& config_path, EngineFlags& flags, const char* config_help);
// --format table|json.
void add_format_flag(CLI::App& command, std::string& format);

// The engine's settings for `config` and the master config the flags name
// (or the one salttap's config names, when the flags do not).
indexer::IndexerConfig engine_config(const config::Config& config, EngineFlags flags);

// `output` fitted to the terminal `out` is (its width, colour only on a terminal).
HistoryOutput on_terminal(HistoryOutput output, std::FILE* out);

inline constexpr const char* kEngineConfigHelp =
    "salttap config file (YAML) with an indexer: section (without one, the master config's "
    "elasticsearch: returner block is used)";

}  // namespace salttap::cli
