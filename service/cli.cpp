#include "service/cli.h"

#include <cstdio>

#include <CLI/CLI.hpp>

#include "service/replay.h"

namespace salttap::service {

int run_cli(int argc, char** argv) {
  CLI::App app{"salttap - know what your Salt fleet actually did"};
  app.require_subcommand(1);

  ReplayOptions replay;
  std::uint64_t max_frame_mib = replay.limits.max_frame_bytes >> 20;
  auto* replay_cmd = app.add_subcommand("replay", "Decode captures (raw pub-socket bytes or JSON lines)");
  replay_cmd->add_option("files", replay.files, "Capture files")->required()->check(CLI::ExistingFile);
  replay_cmd->add_option("--output", replay.output, "What to print")
      ->check(CLI::IsMember({"events"}))
      ->capture_default_str();
  replay_cmd->add_option("--max-frame-mib", max_frame_mib, "Skip frames larger than this")->capture_default_str();

  CLI11_PARSE(app, argc, argv);

  if (replay_cmd->parsed()) {
    replay.limits.max_frame_bytes = max_frame_mib << 20;
    return run_replay(replay, stdout);
  }
  return 2;
}

}  // namespace salttap::service
