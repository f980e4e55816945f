#include "cli/internal/fire_command.h"

#include <CLI/CLI.hpp>
#include <memory>
#include "cli/internal/bus_flags.h"

#include "common/log.h"
#include "tap/event_firer.h"
#include "tap/event_from_json.h"
#include "tap/pull_framing_probe.h"

namespace salttap::cli {

int run_fire(const FireOptions& options) {
  std::string error;
  auto packed = tap::msgpack_from_json(options.data_json, &error);
  if (!packed) {
    log::error("fire: --data: {}", error);
    return 2;
  }
  msgpack::object_handle data = msgpack::unpack(packed->data(), packed->size());
  if (data.get().type != msgpack::type::MAP) {
    log::error("fire: --data must be a JSON object");
    return 2;
  }
  if (!options.tag.starts_with(tap::kFireTagPrefix)) {
    log::error("fire: refusing tag '{}': salttap only fires tags under '{}'", options.tag, tap::kFireTagPrefix);
    return 2;
  }

  tap::Framing framing = tap::Framing::unknown;
  if (options.framing == "plain")
    framing = tap::Framing::plain;
  else if (options.framing == "len32")
    framing = tap::Framing::len32;
  else
    framing = tap::probe_pull_framing({options.bus.pub(), options.bus.pull()});
  if (framing == tap::Framing::unknown) {
    log::error("fire: {} accepted neither framing (is the master running?)", options.bus.pull().describe());
    return 1;
  }
  try {
    tap::EventFirer firer(options.bus.pull());
    firer.fire(options.tag, data.get(), framing);
  } catch (const tap::FireError& e) {
    log::error("fire: {}", e.what());
    return 1;
  }
  log::info("fire: fired {} ({} framing)", options.tag, tap::to_string(framing));
  return 0;
}

Command add_fire_command(CLI::App& app) {
  auto options = std::make_shared<FireOptions>();
  auto* cmd = app.add_subcommand("fire", "Fire one salttap/... event into the master's bus (for reactors)");
  add_bus_flags(*cmd, options->bus);
  cmd->add_option("--tag", options->tag, "Event tag; must start with salttap/")->required();
  cmd->add_option("--data", options->data_json, "Event data, a JSON object")->capture_default_str();
  cmd->add_option("--framing", options->framing, "Pull-socket framing: auto probes it")
      ->check(CLI::IsMember({"auto", "plain", "len32"}))
      ->capture_default_str();
  return {cmd, [options](Invocation&) { return run_fire(*options); }};
}

}  // namespace salttap::cli
