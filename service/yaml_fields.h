#pragma once
// Strict YAML field access shared by the config loaders: unknown keys and
// wrong types are ConfigErrors naming the key.

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "service/config.h"

namespace salttap::service::yaml {

inline void only_keys(const YAML::Node& node, const std::string& where, const std::set<std::string>& allowed) {
  if (!node) return;
  if (!node.IsMap()) throw ConfigError(fmt::format("{}: expected a mapping", where));
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    if (!allowed.count(key)) throw ConfigError(fmt::format("{}: unknown key '{}'", where, key));
  }
}

template <typename T>
T get(const YAML::Node& node, const char* key, const std::string& where, T fallback) {
  const YAML::Node v = node[key];
  if (!v || v.IsNull()) return fallback;
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    throw ConfigError(fmt::format("{}.{}: wrong type", where, key));
  }
}

inline std::vector<std::string> strings(const YAML::Node& node, const std::string& where) {
  std::vector<std::string> out;
  if (!node || node.IsNull()) return out;
  if (node.IsScalar()) return {node.as<std::string>()};
  if (!node.IsSequence()) throw ConfigError(where + ": expected a list of strings");
  for (const auto& item : node) out.push_back(item.as<std::string>());
  return out;
}

}  // namespace salttap::service::yaml
