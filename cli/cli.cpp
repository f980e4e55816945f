#include "cli/cli.h"

#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/internal/backfill_command.h"
#include "cli/internal/check_config_command.h"
#include "cli/internal/command.h"
#include "cli/internal/fire_command.h"
#include "cli/internal/fleet_command.h"
#include "cli/internal/jobs_command.h"
#include "cli/internal/minions_command.h"
#include "cli/internal/replay_command.h"
#include "cli/internal/run_command.h"
#include "cli/internal/setup_command.h"
#include "cli/internal/ui_command.h"
#include "cli/internal/watch_command.h"
#include "common/log.h"
#include "common/version.h"

namespace salttap::cli {

// The dispatcher: the global flags, then every command registers its own
// options and hands back its runner; the one that was named runs.
int run_cli(int argc, char** argv) {
  CLI::App app{"salttap - know what your Salt fleet actually did"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "salttap " + std::string(version()),
                       "Print the version (and the git describe of the tree it was built from) and exit");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Debug logging");
  std::string log_format = "auto";
  app.add_option("--log-format", log_format,
                 "auto: journal when stderr is systemd's journal (JOURNAL_STREAM), else plain; plain: time, "
                 "level, message; journal: <N> syslog priority, no time; json: one JSON object per line")
      ->check(CLI::IsMember({"auto", "plain", "journal", "json"}))
      ->capture_default_str();
  std::string config_path;  // every command's --config (check-config's file)

  const std::vector<Command> commands{
      add_check_config_command(app, config_path), add_replay_command(app, config_path),
      add_watch_command(app, config_path),        add_fire_command(app),
      add_run_command(app, config_path),          add_setup_command(app, config_path),
      add_backfill_command(app, config_path),     add_jobs_command(app, config_path),
      add_minions_command(app, config_path),      add_fleet_command(app, config_path),
      add_ui_command(app, config_path),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the error (or the help, code 0)
    for (const Command& c : commands)
      if (code != 0 && c.usage_errors_exit_2 && c.app->parsed()) return 2;
    return code;
  }
  if (verbose) log::set_level(log::Level::debug);
  if (const auto format = log::parse_format(log_format)) log::set_format(*format);  // else auto: detected at start

  Invocation call(config_path);
  for (const Command& c : commands) {
    if (!c.app->parsed()) continue;
    try {
      return c.run(call);
    } catch (const std::exception& e) {
      log::error("{}", e.what());
      return 1;
    }
  }
  return 2;
}

}  // namespace salttap::cli
