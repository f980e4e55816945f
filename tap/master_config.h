#pragma once
// Reads the salt-master's own config so the tap finds the bus with no flags:
// /etc/salt/master, then `default_include` (master.d/*.conf) and `include`
// files, which override it, as Salt's master_config() does.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/config_error.h"

#include "tap/endpoint.h"

namespace salttap::tap {

struct MasterBus {
  std::string config_path;  // empty when no config file was found
  std::string id;           // the master's `id`, when set
  std::string user = "root";
  std::string root_dir = "/";
  std::string sock_dir;  // after root_dir and the path-length fallback
  std::string cachedir;
  std::string pki_dir;  // after root_dir; accepted keys are the files in <pki_dir>/minions
  bool tcp = false;     // ipc_mode: tcp
  std::string tcp_host = "127.0.0.1";
  std::uint16_t tcp_pub_port = 4512;
  std::uint16_t tcp_pull_port = 4513;
  // Salt's Elasticsearch returner block (`elasticsearch:`) as YAML text, when
  // the master config has one: salttap's indexer can take it over as is.
  std::string elasticsearch_yaml;
  // The job cache (docs/salt-event-bus.md §8): `salttap backfill` reads
  // <cachedir>/jobs when the master keeps it (job_cache on, the local_cache
  // returner, no ext_job_cache); job directories are named by the jid's
  // digest under hash_type.
  std::string hash_type = "sha256";
  bool job_cache = true;
  std::string master_job_cache = "local_cache";
  std::string ext_job_cache;
  // A master of masters (`order_masters: True`): list-target minions without
  // a key here may answer through a syndic.
  bool order_masters = false;

  Endpoint pub() const;   // master_event_pub.ipc or the TCP pub port
  Endpoint pull() const;  // master_event_pull.ipc or the TCP pull port
};

inline constexpr const char* kDefaultMasterConfig = "/etc/salt/master";

// A missing file at the default path gives Salt's defaults; a missing file
// given explicitly, or invalid YAML, throws ConfigError.
MasterBus load_master_config(const std::string& path = kDefaultMasterConfig, bool required = false);

// Salt's prepend_root_dir(): join root_dir and path unless path is already under root_dir.
std::string prepend_root_dir(const std::string& root_dir, const std::string& path);

}  // namespace salttap::tap
