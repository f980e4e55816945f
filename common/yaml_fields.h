#pragma once
// Strict YAML field access, the one implementation every config parser uses:
// an unknown key, a wrong type or an empty item is a ConfigError naming
// `where` (the section path) and the key or index.

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/config_error.h"

namespace salttap::yaml {

// `node` (absent is fine) must be a mapping whose keys are all in `allowed`.
inline void only_keys(const YAML::Node& node, const std::string& where, const std::set<std::string>& allowed) {
  if (!node) return;
  if (!node.IsMap()) throw ConfigError(fmt::format("{}: expected a mapping", where));
  for (const auto& kv : node) {
    const auto key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
    if (!allowed.count(key)) throw ConfigError(fmt::format("{}: unknown key '{}'", where, key));
  }
}

// node[key] as T, `fallback` when absent or null.
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

// A non-empty string scalar.
inline std::string scalar(const YAML::Node& node, const std::string& where) {
  if (!node.IsScalar() || node.Scalar().empty()) throw ConfigError(where + ": expected a non-empty string");
  return node.Scalar();
}

// A list of non-empty strings; one string is a list of one; absent or null is empty.
inline std::vector<std::string> strings(const YAML::Node& node, const std::string& where) {
  std::vector<std::string> out;
  if (!node || node.IsNull()) return out;
  if (node.IsScalar()) return {scalar(node, where)};
  if (!node.IsSequence()) throw ConfigError(where + ": expected a list of strings");
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(scalar(node[i], fmt::format("{}[{}]", where, i)));
  return out;
}

}  // namespace salttap::yaml
