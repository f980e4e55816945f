#pragma once
// One `salttap` subcommand as the dispatcher (cli/cli.cpp) sees it: the
// command adds its options to the app when registered and hands back its
// runner, which reads them once the command line is parsed. Options live
// with the runner, so no command sees another's.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "config/config.h"

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's own namespace
class App;
}

namespace salttap::cli {

// What every runner shares: the salttap config file the command's --config
// named. It is read when the runner first asks, after the runner checked its
// options, so a usage error is reported without reading a file.
class Invocation {
 public:
  explicit Invocation(const std::string& config_path) : config_path_(config_path) {}

  const std::string& config_path() const { return config_path_; }
  // The file's config (the defaults without --config); throws ConfigError.
  const config::Config& config();

 private:
  const std::string& config_path_;
  std::optional<config::Config> config_;
};

struct Command {
  CLI::App* app = nullptr;  // the subcommand, owned by the top-level app
  std::function<int(Invocation&)> run;
  // A bad option exits 2 rather than CLI11's own code (docs/commands.md).
  bool usage_errors_exit_2 = false;
};

// Options that parse but do not make sense together: exit 2, as for a parse error.
int usage_error(const char* command, const std::string& why);

// --max-frame-mib, kept in MiB on the command line and in bytes in DecodeLimits.
void add_frame_limit(CLI::App& command, std::uint64_t& max_frame_mib);

// A --*-seconds option as the milliseconds the runners wait in.
std::chrono::milliseconds from_seconds(double seconds);

}  // namespace salttap::cli
