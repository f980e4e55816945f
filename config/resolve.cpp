#include "config/resolve.h"

#include <unistd.h>

#include <fstream>

#include <yaml-cpp/yaml.h>

#include "common/log.h"
#include "config/indexer_section.h"

namespace salttap::config {

void choose_master_config(const Config& config, std::string& path, bool& given) {
  if (given || !config.master_config) return;
  path = *config.master_config;
  given = true;
}

indexer::IndexerConfig effective_indexer_config(const Config& config, const tap::MasterBus& master) {
  indexer::IndexerConfig ix = config.indexer;
  if (!ix.enabled && !master.elasticsearch_yaml.empty()) {
    apply_returner_block(YAML::Load(master.elasticsearch_yaml), ix);
    ix.source = "elasticsearch: block of " + master.config_path;
  }
  if (!ix.enabled)
    throw ConfigError(
        "no indexer configured: add an indexer: section (or Salt's elasticsearch: returner block) to "
        "salttap's config, or an elasticsearch: block to the master config");
  resolve_secrets(ix);
  for (const auto& note : ix.notes) log::info("indexer: {}", note);
  return ix;
}

std::string effective_master_id(const Config& config, const tap::MasterBus& master) {
  if (!config.master_id.empty()) return config.master_id;
  if (!master.id.empty()) return master.id;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == 0) return "master";
  return std::string(host) + "_master";
}

std::string effective_fleet_id(const Config& config, const tap::MasterBus& master) {
  return config.fleet_id.empty() ? effective_master_id(config, master) : config.fleet_id;
}

Config correlating_config(Config file, const tap::MasterBus& master) {
  file.master_id = effective_master_id(file, master);
  file.fleet_id = effective_fleet_id(file, master);
  file.correlator.order_masters = master.order_masters;
  return file;
}

std::filesystem::path fleet_keys_dir(const Config& config, const tap::MasterBus& master) {
  if (!config.fleet.keys_dir.empty()) return config.fleet.keys_dir;
  return std::filesystem::path(master.pki_dir) / "minions";
}

Config run_config(Config file, const tap::MasterBus& master) {
  file.indexer = effective_indexer_config(file, master);
  file.fleet.keys_dir = fleet_keys_dir(file, master);
  file.fleet.state_path = fleet_state_path(file);
  return correlating_config(std::move(file), master);
}

std::string ui_password(const UiConfig& ui) {
  if (ui.username.empty()) return {};
  if (ui.password_file.empty()) return ui.password;
  std::ifstream in(ui.password_file);
  if (!in) throw ConfigError("ui.password_file: cannot read " + ui.password_file.string());
  std::string password;
  std::getline(in, password);
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (password.empty()) throw ConfigError("ui.password_file: " + ui.password_file.string() + " is empty");
  return password;
}

}  // namespace salttap::config
