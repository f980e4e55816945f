#include "fleet/fleet_config.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/config_error.h"
#include "common/text.h"
#include "common/yaml_fields.h"

namespace salttap::fleet {
namespace {

using yaml::get;
using yaml::only_keys;

Micros positive_seconds(const YAML::Node& node, const char* key, const std::string& where, Micros fallback) {
  const auto s = get<double>(node, key, where, static_cast<double>(fallback) / kMicrosPerSecond);
  if (!(s > 0) || s > 1e9) throw ConfigError(fmt::format("{}.{}: expected seconds > 0", where, key));
  return static_cast<Micros>(std::llround(s * kMicrosPerSecond));
}

std::vector<SilenceRule> parse_rules(const YAML::Node& node, const std::string& where) {
  if (!node.IsSequence() || node.size() == 0) throw ConfigError(where + ": expected a non-empty list of rules");
  std::vector<SilenceRule> rules;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    const YAML::Node r = node[i];
    only_keys(r, at, {"match", "ignore", "after_seconds"});
    SilenceRule rule;
    if (!r["match"]) throw ConfigError(at + ": match is required");
    rule.match = yaml::scalar(r["match"], at + ".match");
    rule.ignore = get<bool>(r, "ignore", at, false);
    if (!rule.ignore && !r["after_seconds"]) throw ConfigError(at + ": after_seconds is required (or ignore: true)");
    if (!rule.ignore) rule.after = positive_seconds(r, "after_seconds", at, rule.after);
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace

std::size_t StormConfig::threshold(std::size_t fleet_size) const {
  const auto by_fraction = static_cast<std::size_t>(std::ceil(min_fraction * static_cast<double>(fleet_size)));
  return std::max<std::size_t>({min_minions, by_fraction, 1});
}

int FleetConfig::rule_for(std::string_view minion) const {
  for (std::size_t i = 0; i < silence.size(); ++i)
    if (glob_match(silence[i].match, minion)) return static_cast<int>(i);
  return -1;
}

FleetConfig parse_fleet_config(const YAML::Node& node, const std::string& where) {
  FleetConfig c;
  if (!node || node.IsNull()) return c;
  only_keys(node, where,
            {"enabled", "silence", "sweep_seconds", "forget_after_seconds", "keys_rescan_seconds", "keys_dir",
             "count_presence", "storm", "state_path", "index_interval_seconds"});
  c.enabled = get<bool>(node, "enabled", where, c.enabled);
  if (node["silence"]) c.silence = parse_rules(node["silence"], where + ".silence");
  c.sweep = positive_seconds(node, "sweep_seconds", where, c.sweep);
  c.forget_after = positive_seconds(node, "forget_after_seconds", where, c.forget_after);
  c.keys_rescan = positive_seconds(node, "keys_rescan_seconds", where, c.keys_rescan);
  c.index_interval = positive_seconds(node, "index_interval_seconds", where, c.index_interval);
  c.keys_dir = get<std::string>(node, "keys_dir", where, "");
  c.count_presence = get<bool>(node, "count_presence", where, c.count_presence);
  c.state_path = get<std::string>(node, "state_path", where, "");
  if (const YAML::Node s = node["storm"]) {
    const std::string at = where + ".storm";
    only_keys(s, at, {"min_minions", "min_fraction"});
    const auto min = get<long long>(s, "min_minions", at, static_cast<long long>(c.storm.min_minions));
    if (min < 1) throw ConfigError(at + ".min_minions: expected 1 or more");
    c.storm.min_minions = static_cast<std::size_t>(min);
    c.storm.min_fraction = get<double>(s, "min_fraction", at, c.storm.min_fraction);
    if (!(c.storm.min_fraction >= 0 && c.storm.min_fraction <= 1))
      throw ConfigError(at + ".min_fraction: expected 0 to 1");
  }
  return c;
}

}  // namespace salttap::fleet
