#pragma once
// What every command derives from salttap's config file and the master's
// config, decided here once so that no two commands can disagree: which
// engine (salttap's indexer: section, else Salt's elasticsearch: returner
// block), with its secrets read; the master id alerts and documents carry;
// the master config's order_masters for the correlator; the job browser's
// password.

#include <filesystem>
#include <string>

#include "config/config.h"
#include "indexer/indexer_config.h"
#include "tap/master_config.h"

namespace salttap::config {

// The master config a command reads: the one a flag named (`given`), else
// the one salttap's config names (master_config:), else the default `path`
// already holds. Every command that reads the master's config goes through here.
void choose_master_config(const Config& config, std::string& path, bool& given);

// The indexer settings: salttap's config, else Salt's returner block from
// the master config. Secrets resolved. Throws ConfigError when neither names an engine.
indexer::IndexerConfig effective_indexer_config(const Config& config, const tap::MasterBus& master);

// The master id alerts and documents carry: the config's master_id, else the
// master config's id, else "<host>_master" (Salt's own default).
std::string effective_master_id(const Config& config, const tap::MasterBus& master);
// The fleet documents carry: the config's fleet_id, else the effective master id.
std::string effective_fleet_id(const Config& config, const tap::MasterBus& master);

// `file` with what the master's config says about jobs settled: the master
// id and order_masters (a master of masters does not own its minions' keys).
// Every command that correlates (run, backfill, replay of a live master's
// stream, watch --jobs) works with this.
Config correlating_config(Config file, const tap::MasterBus& master);

// Where the master keeps its accepted keys: fleet.keys_dir, else
// <pki_dir>/minions of the master's config.
std::filesystem::path fleet_keys_dir(const Config& config, const tap::MasterBus& master);

// The config `run` works with: correlating_config with the engine settled
// (effective_indexer_config) and the fleet's paths decided. At start and at
// every reload. Throws ConfigError.
Config run_config(Config file, const tap::MasterBus& master);

// The job browser's password: ui.password, or the first line of
// ui.password_file; empty when ui.username is (the browser asks for none). Throws ConfigError when the file cannot be
// read or is empty.
std::string ui_password(const UiConfig& ui);

}  // namespace salttap::config
