#include "tap/master_config.h"

#include <glob.h>

#include <filesystem>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace salttap::tap {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultSockDir = "/var/run/salt/master";
constexpr const char* kDefaultCacheDir = "/var/cache/salt/master";
constexpr const char* kDefaultPkiDir = "/etc/salt/pki/master";
constexpr const char* kDefaultInclude = "master.d/*.conf";

YAML::Node load_yaml(const std::string& path) {
  try {
    YAML::Node n = YAML::LoadFile(path);
    if (n.IsNull()) return YAML::Node(YAML::NodeType::Map);
    if (!n.IsMap()) throw ConfigError(path + ": not a YAML mapping");
    return n;
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ": " + e.what());
  }
}

void overlay(YAML::Node& into, const YAML::Node& from) {
  for (const auto& kv : from) into[kv.first.as<std::string>()] = kv.second;
}

std::vector<std::string> expand(const std::string& pattern, const fs::path& base) {
  const fs::path p = fs::path(pattern).is_absolute() ? fs::path(pattern) : base / pattern;
  glob_t g{};
  std::vector<std::string> out;
  if (::glob(p.c_str(), 0, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) {  // sorted by glob
      std::error_code ec;
      if (fs::is_regular_file(g.gl_pathv[i], ec)) out.emplace_back(g.gl_pathv[i]);  // Salt skips directories too
    }
  }
  ::globfree(&g);
  return out;
}

std::vector<std::string> include_patterns(const YAML::Node& n) {
  std::vector<std::string> out;
  if (!n) return out;
  if (n.IsScalar()) out.push_back(n.as<std::string>());
  if (n.IsSequence())
    for (const auto& item : n) out.push_back(item.as<std::string>());
  return out;
}

template <typename T>
T get(const YAML::Node& cfg, const char* key, T fallback) {
  try {
    if (const YAML::Node v = cfg[key]; v && !v.IsNull()) return v.as<T>();
  } catch (const YAML::Exception& e) {
    throw ConfigError(std::string("master config key '") + key + "': " + e.what());
  }
  return fallback;
}

MasterBus load_master_config_or_throw_yaml(const std::string& path, bool required);

}  // namespace

std::string prepend_root_dir(const std::string& root_dir, const std::string& path) {
  std::string root = root_dir;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root.empty() || root == "/") return path;
  if (path == root || path.starts_with(root + "/")) return path;
  return (fs::path(root) / fs::path(path).relative_path()).string();
}

Endpoint MasterBus::pub() const {
  return tcp ? Endpoint::tcp(tcp_host, tcp_pub_port)
             : Endpoint::unix_socket((fs::path(sock_dir) / "master_event_pub.ipc").string());
}

Endpoint MasterBus::pull() const {
  return tcp ? Endpoint::tcp(tcp_host, tcp_pull_port)
             : Endpoint::unix_socket((fs::path(sock_dir) / "master_event_pull.ipc").string());
}

MasterBus load_master_config(const std::string& path, bool required) {
  try {
    return load_master_config_or_throw_yaml(path, required);
  } catch (const YAML::Exception& e) {  // e.g. an include list of maps, a complex key
    throw ConfigError(path + " (or a file it includes): " + e.what());
  } catch (const std::ios_base::failure& e) {  // e.g. the main path is a directory
    throw ConfigError(path + ": " + e.what());
  }
}

namespace {
MasterBus load_master_config_or_throw_yaml(const std::string& path, bool required) {
  YAML::Node cfg(YAML::NodeType::Map);
  MasterBus bus;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    bus.config_path = path;
    cfg = load_yaml(path);
    const fs::path base = fs::path(path).parent_path();
    std::vector<std::string> patterns{get<std::string>(cfg, "default_include", kDefaultInclude)};
    for (auto& p : include_patterns(cfg["include"])) patterns.push_back(p);
    YAML::Node merged = YAML::Clone(cfg);
    for (const auto& pattern : patterns)
      for (const auto& file : expand(pattern, base)) overlay(merged, load_yaml(file));
    cfg = merged;
  } else if (required) {
    throw ConfigError(path + ": no such file");
  }

  bus.id = get<std::string>(cfg, "id", "");
  if (const YAML::Node es = cfg["elasticsearch"]; es && es.IsMap()) bus.elasticsearch_yaml = YAML::Dump(es);
  bus.user = get<std::string>(cfg, "user", "root");
  bus.root_dir = get<std::string>(cfg, "root_dir", "/");
  bus.sock_dir = prepend_root_dir(bus.root_dir, get<std::string>(cfg, "sock_dir", kDefaultSockDir));
  bus.cachedir = prepend_root_dir(bus.root_dir, get<std::string>(cfg, "cachedir", kDefaultCacheDir));
  bus.pki_dir = prepend_root_dir(bus.root_dir, get<std::string>(cfg, "pki_dir", kDefaultPkiDir));
  // apply_master_config(): a sock_dir too long for AF_UNIX moves under cachedir.
  if (bus.sock_dir.size() > bus.cachedir.size() + 10) bus.sock_dir = (fs::path(bus.cachedir) / ".salt-unix").string();
  bus.tcp = get<std::string>(cfg, "ipc_mode", "ipc") == "tcp";
  bus.tcp_pub_port = get<std::uint16_t>(cfg, "tcp_master_pub_port", 4512);
  bus.tcp_pull_port = get<std::uint16_t>(cfg, "tcp_master_pull_port", 4513);
  bus.hash_type = get<std::string>(cfg, "hash_type", "sha256");
  bus.job_cache = get<bool>(cfg, "job_cache", true);
  bus.master_job_cache = get<std::string>(cfg, "master_job_cache", "local_cache");
  bus.ext_job_cache = get<std::string>(cfg, "ext_job_cache", "");
  bus.order_masters = get<bool>(cfg, "order_masters", false);
  return bus;
}

}  // namespace

}  // namespace salttap::tap
