#include "cli/internal/engine_flags.h"

#include <CLI/CLI.hpp>

#include "common/text_table.h"
#include "config/resolve.h"

namespace salttap::cli {

void add_engine_flags(CLI::App& command, std::string& config_path, EngineFlags& flags, const char* config_help) {
  command.add_option("--config", config_path, config_help);
  command.add_option("--master-config", flags.master_config, "The salt-master's config (its elasticsearch: block)")
      ->capture_default_str()
      ->each([&flags](const std::string&) { flags.master_config_given = true; });
}

void add_format_flag(CLI::App& command, std::string& format) {
  command.add_option("--format", format, "table (fits the terminal) or json (one document per line)")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
}

indexer::IndexerConfig engine_config(const config::Config& config, EngineFlags flags) {
  config::choose_master_config(config, flags.master_config, flags.master_config_given);
  return config::effective_indexer_config(config,
                                          tap::load_master_config(flags.master_config, flags.master_config_given));
}

HistoryOutput on_terminal(HistoryOutput output, std::FILE* out) {
  output.width = terminal_width(out);
  output.colour = use_colour(out);
  return output;
}

}  // namespace salttap::cli
