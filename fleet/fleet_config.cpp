#include "fleet/fleet_config.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

std::vector<HighstateRule> parse_highstate_rules(const YAML::Node& node, const std::string& where) {
  if (!node.IsSequence()) throw ConfigError(where + ": expected a list of rules");
  std::vector<HighstateRule> rules;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    const YAML::Node r = node[i];
    only_keys(r, at, {"match", "stale_after_seconds"});
    HighstateRule rule;
    if (!r["match"]) throw ConfigError(at + ": match is required");
    rule.match = yaml::scalar(r["match"], at + ".match");
    // stale_after_seconds: null (or absent) leaves the minions it matches unwatched.
    if (r["stale_after_seconds"] && !r["stale_after_seconds"].IsNull())
      rule.stale_after = positive_seconds(r, "stale_after_seconds", at, 0);
    rules.push_back(std::move(rule));
  }
  return rules;
}

constexpr std::array<std::string_view, kMinionMetrics> kMinionMetricNames = {"last_heard", "last_highstate_success",
                                                                             "last_highstate_failed_states"};

GlobList globs(const YAML::Node& node, const std::string& where) { return GlobList(yaml::strings(node, where)); }

MinionMetricsConfig parse_minion_metrics(const YAML::Node& node, const std::string& where) {
  MinionMetricsConfig c;
  if (!node || node.IsNull()) return c;
  only_keys(node, where, {"enabled", "match", "exclude", "max_minions", "metrics"});
  c.enabled = get<bool>(node, "enabled", where, c.enabled);
  if (node["match"]) c.match = globs(node["match"], where + ".match");
  if (node["exclude"]) c.exclude = globs(node["exclude"], where + ".exclude");
  const auto max = get<long long>(node, "max_minions", where, static_cast<long long>(c.max_minions));
  if (max < 1 || max > 100000) throw ConfigError(where + ".max_minions: expected 1 to 100000");
  c.max_minions = static_cast<std::size_t>(max);
  if (const YAML::Node m = node["metrics"]) {
    c.metrics = {};
    for (const std::string& name : yaml::strings(m, where + ".metrics")) {
      const auto it = std::find(kMinionMetricNames.begin(), kMinionMetricNames.end(), name);
      if (it == kMinionMetricNames.end())
        throw ConfigError(fmt::format("{}.metrics: unknown metric '{}' (known: {})", where, name,
                                      fmt::join(kMinionMetricNames, ", ")));
      c.metrics[static_cast<std::size_t>(it - kMinionMetricNames.begin())] = true;
    }
  }
  return c;
}

}  // namespace

std::string_view to_string(MinionMetric metric) { return kMinionMetricNames.at(static_cast<std::size_t>(metric)); }

int FleetConfig::highstate_rule_for(std::string_view minion) const {
  for (std::size_t i = 0; i < highstate.size(); ++i)
    if (glob_match(highstate[i].match, minion)) return static_cast<int>(i);
  return -1;
}

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
             "count_presence", "storm", "state_path", "index_interval_seconds", "highstate", "highstate_alert_never",
             "minion_metrics"});
  c.enabled = get<bool>(node, "enabled", where, c.enabled);
  if (node["silence"]) c.silence = parse_rules(node["silence"], where + ".silence");
  c.sweep = positive_seconds(node, "sweep_seconds", where, c.sweep);
  c.forget_after = positive_seconds(node, "forget_after_seconds", where, c.forget_after);
  c.keys_rescan = positive_seconds(node, "keys_rescan_seconds", where, c.keys_rescan);
  c.index_interval = positive_seconds(node, "index_interval_seconds", where, c.index_interval);
  c.keys_dir = get<std::string>(node, "keys_dir", where, "");
  c.count_presence = get<bool>(node, "count_presence", where, c.count_presence);
  c.state_path = get<std::string>(node, "state_path", where, "");
  if (node["highstate"] && !node["highstate"].IsNull())
    c.highstate = parse_highstate_rules(node["highstate"], where + ".highstate");
  c.highstate_alert_never = get<bool>(node, "highstate_alert_never", where, c.highstate_alert_never);
  c.minion_metrics = parse_minion_metrics(node["minion_metrics"], where + ".minion_metrics");
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
