#include "cli/internal/command.h"

#include <cstdio>

#include <CLI/CLI.hpp>

namespace salttap::cli {

const config::Config& Invocation::config() {
  if (!config_) config_ = config_path_.empty() ? config::default_config() : config::load_config(config_path_);
  return *config_;
}

int usage_error(const char* command, const std::string& why) {
  std::fprintf(stderr, "salttap %s: %s\nRun with --help for more information.\n", command, why.c_str());
  return 2;
}

void add_frame_limit(CLI::App& command, std::uint64_t& max_frame_mib) {
  command.add_option("--max-frame-mib", max_frame_mib, "Skip (and count) frames larger than this")
      ->capture_default_str();
}

std::chrono::milliseconds from_seconds(double seconds) {
  return std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

}  // namespace salttap::cli
