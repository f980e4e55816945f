#include "config/indexer_section.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#include "common/yaml_fields.h"
#include "config/config.h"

namespace salttap::config {
namespace {

using indexer::IndexerConfig;
using indexer::SecretSource;
using yaml::get;
using yaml::only_keys;
using yaml::strings;

std::chrono::milliseconds ms(const YAML::Node& n, const char* key, const std::string& where,
                             std::chrono::milliseconds fallback) {
  return std::chrono::milliseconds(get<long>(n, key, where, static_cast<long>(fallback.count())));
}

// An engine time value as index settings take it: digits and a unit, or -1 (never).
bool is_time_value(std::string_view v) {
  if (v == "-1") return true;
  const std::size_t digits = v.find_first_not_of("0123456789");
  if (digits == 0 || digits == std::string_view::npos) return false;
  const std::string_view unit = v.substr(digits);
  return unit == "ms" || unit == "s" || unit == "m" || unit == "h" || unit == "d";
}

SecretSource secret(const YAML::Node& n, const std::string& key, const std::string& where) {
  const int given = (n[key] ? 1 : 0) + (n[key + "_env"] ? 1 : 0) + (n[key + "_file"] ? 1 : 0);
  if (given > 1) throw ConfigError(fmt::format("{}.{}: give one of {}, {}_env, {}_file", where, key, key, key, key));
  SecretSource s;
  s.value = get<std::string>(n, key.c_str(), where, "");
  s.env = get<std::string>(n, (key + "_env").c_str(), where, "");
  s.file = get<std::string>(n, (key + "_file").c_str(), where, "");
  return s;
}

std::string read_secret(const SecretSource& s, const std::string& key) {
  if (!s.value.empty()) return s.value;
  if (!s.env.empty()) {
    const char* value = std::getenv(s.env.c_str());
    if (!value) throw ConfigError(fmt::format("indexer.auth.{}_env: environment variable {} is not set", key, s.env));
    return value;
  }
  if (!s.file.empty()) {
    std::ifstream in(s.file);
    if (!in) throw ConfigError(fmt::format("indexer.auth.{}_file: cannot read {}", key, s.file));
    std::stringstream ss;
    ss << in.rdbuf();
    std::string value = ss.str();
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
    return value;
  }
  return {};
}

std::vector<std::string> host_urls(const YAML::Node& n, const std::string& where) {
  std::vector<std::string> hosts = strings(n, where);
  if (hosts.empty()) throw ConfigError(where + ": at least one host");
  return hosts;
}

indexer::FsyncPolicy fsync_policy(const std::string& name) {
  if (name == "every_batch") return indexer::FsyncPolicy::every_batch;
  if (name == "interval") return indexer::FsyncPolicy::interval;
  if (name == "never") return indexer::FsyncPolicy::never;
  throw ConfigError("indexer.spool.fsync: every_batch, interval or never");
}

}  // namespace

http::TlsConfig parse_tls(const YAML::Node& t, const std::string& where) {
  only_keys(t, where, {"verify", "ca_file", "client_cert", "client_key"});
  http::TlsConfig tls;
  tls.verify = get<bool>(t, "verify", where, true);
  tls.ca_file = get<std::string>(t, "ca_file", where, "");
  tls.client_cert = get<std::string>(t, "client_cert", where, "");
  tls.client_key = get<std::string>(t, "client_key", where, "");
  if (tls.client_cert.empty() != tls.client_key.empty())
    throw ConfigError(where + ": client_cert and client_key go together");
  return tls;
}

IndexerConfig default_indexer_config() {
  IndexerConfig c;
  c.spool.dir = "/var/lib/salttap/spool";
  return c;
}

void resolve_secrets(IndexerConfig& c) {
  if (c.password.given()) c.http.auth.password = read_secret(c.password, "password");
  if (c.api_key.given()) c.http.auth.api_key = read_secret(c.api_key, "api_key");
}

void apply_returner_block(const YAML::Node& n, IndexerConfig& c) {
  if (!n || n.IsNull()) return;
  if (!n.IsMap()) throw ConfigError("elasticsearch: expected a mapping (Salt's returner block)");
  const std::string where = "elasticsearch";
  c.enabled = true;
  c.source = c.source.empty() ? "elasticsearch (Salt returner block)" : c.source;
  bool use_ssl = false;
  for (const auto& kv : n) {
    const auto key = kv.first.as<std::string>();
    if (key == "hosts")
      c.http.hosts = host_urls(kv.second, where + ".hosts");
    else if (key == "index_date")
      c.documents.layout.index_date = get<bool>(n, "index_date", where, true);
    else if (key == "number_of_shards")
      c.templates.number_of_shards = get<int>(n, "number_of_shards", where, 1);
    else if (key == "number_of_replicas")
      c.templates.number_of_replicas = get<int>(n, "number_of_replicas", where, 0);
    else if (key == "functions_blacklist")
      c.documents.functions_blacklist = strings(kv.second, where + ".functions_blacklist");
    else if (key == "states_single_index")
      c.documents.states = get<bool>(n, "states_single_index", where, false);
    else if (key == "states_count" || key == "states_order_output")
      c.notes.push_back(
          fmt::format("elasticsearch.{}: always on in salttap (state counts and run order are fields)", key));
    else if (key == "username")
      c.http.auth.username = get<std::string>(n, "username", where, "");
    else if (key == "password")
      c.password.value = get<std::string>(n, "password", where, "");
    else if (key == "api_key")
      c.api_key.value = get<std::string>(n, "api_key", where, "");
    else if (key == "use_ssl")
      use_ssl = get<bool>(n, "use_ssl", where, false);
    else if (key == "verify_certs")
      c.http.tls.verify = get<bool>(n, "verify_certs", where, true);
    else if (key == "ca_certs")
      c.http.tls.ca_file = get<std::string>(n, "ca_certs", where, "");
    else if (key == "timeout")
      c.http.request_timeout =
          std::chrono::milliseconds(static_cast<long>(get<double>(n, "timeout", where, 60) * 1000));
    else
      c.notes.push_back(fmt::format("elasticsearch.{}: Salt returner key not needed by salttap, ignored", key));
  }
  if (use_ssl) {
    for (auto& h : c.http.hosts)
      if (h.find("://") == std::string::npos) h.insert(0, "https://");
  }
}

void apply_indexer_section(const YAML::Node& n, IndexerConfig& c) {
  if (!n) return;
  const std::string w = "indexer";
  only_keys(n, w,
            {"enabled",
             "hosts",
             "index_prefix",
             "index_date",
             "number_of_shards",
             "number_of_replicas",
             "retention_days",
             "refresh_interval",
             "jobs_refresh_interval",
             "install_templates",
             "states_index",
             "events",
             "functions_blacklist",
             "functions_whitelist",
             "text_cap_bytes",
             "tls",
             "auth",
             "bulk",
             "spool",
             "cluster_health_interval_ms"});
  if (n.IsNull()) return;
  c.enabled = get<bool>(n, "enabled", w, true);
  c.source = "indexer";
  if (n["hosts"]) c.http.hosts = host_urls(n["hosts"], w + ".hosts");
  auto& docs = c.documents;
  docs.layout.prefix = get<std::string>(n, "index_prefix", w, docs.layout.prefix);
  const std::string& prefix = docs.layout.prefix;
  if (prefix.empty() || prefix.find_first_of("*?\"<>|/\\, #:") != std::string::npos ||
      std::any_of(prefix.begin(), prefix.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; }))
    throw ConfigError("indexer.index_prefix: lowercase, no spaces or any of * ? \" < > | / \\ , # :");
  docs.layout.index_date = get<bool>(n, "index_date", w, docs.layout.index_date);
  c.templates.number_of_shards = get<int>(n, "number_of_shards", w, c.templates.number_of_shards);
  c.templates.number_of_replicas = get<int>(n, "number_of_replicas", w, c.templates.number_of_replicas);
  if (n["retention_days"] && !n["retention_days"].IsNull()) {
    const int days = get<int>(n, "retention_days", w, 0);
    if (days < 1) throw ConfigError("indexer.retention_days: at least 1");
    c.templates.retention_days = days;
  }
  if (n["refresh_interval"] && !n["refresh_interval"].IsNull()) {
    auto every = get<std::string>(n, "refresh_interval", w, "");
    if (!is_time_value(every))
      throw ConfigError(fmt::format("indexer.refresh_interval: '{}' is not a time like 500ms, 1s or 2m", every));
    c.templates.refresh_interval = std::move(every);
  }
  if (const YAML::Node jobs = n["jobs_refresh_interval"]) {
    auto every = jobs.IsNull() ? std::string() : get<std::string>(n, "jobs_refresh_interval", w, "");
    if (!every.empty() && !is_time_value(every))
      throw ConfigError(fmt::format("indexer.jobs_refresh_interval: '{}' is not a time like 500ms, 1s or 2m", every));
    c.templates.jobs_refresh_interval = std::move(every);
  }
  c.install_templates = get<bool>(n, "install_templates", w, c.install_templates);
  c.cluster_health_interval = ms(n, "cluster_health_interval_ms", w, c.cluster_health_interval);
  if (c.cluster_health_interval.count() != 0 && c.cluster_health_interval.count() < 1000)
    throw ConfigError("indexer.cluster_health_interval_ms: 0 (off) or at least 1000");
  docs.states = get<bool>(n, "states_index", w, docs.states);
  if (const YAML::Node e = n["events"]) {
    only_keys(e, w + ".events", {"enabled", "include", "exclude"});
    docs.events = get<bool>(e, "enabled", w + ".events", true);
    if (e["include"]) docs.events_include = strings(e["include"], w + ".events.include");
    if (e["exclude"]) docs.events_exclude = strings(e["exclude"], w + ".events.exclude");
  }
  if (n["functions_blacklist"])
    docs.functions_blacklist = strings(n["functions_blacklist"], w + ".functions_blacklist");
  if (n["functions_whitelist"])
    docs.functions_whitelist = strings(n["functions_whitelist"], w + ".functions_whitelist");
  docs.text_cap = get<std::size_t>(n, "text_cap_bytes", w, docs.text_cap);
  if (docs.text_cap < 256) throw ConfigError("indexer.text_cap_bytes: at least 256");
  if (const YAML::Node t = n["tls"]) c.http.tls = parse_tls(t, w + ".tls");
  if (const YAML::Node a = n["auth"]) {
    only_keys(a, w + ".auth",
              {"username", "password", "password_env", "password_file", "api_key", "api_key_env", "api_key_file"});
    c.http.auth.username = get<std::string>(a, "username", w + ".auth", "");
    c.password = secret(a, "password", w + ".auth");
    c.api_key = secret(a, "api_key", w + ".auth");
    if (c.api_key.given() && (!c.http.auth.username.empty() || c.password.given()))
      throw ConfigError("indexer.auth: username/password or api_key, not both");
  }
  if (const YAML::Node b = n["bulk"]) {
    const std::string wb = w + ".bulk";
    only_keys(b, wb,
              {"max_bytes", "max_docs", "max_wait_ms", "in_flight", "gzip", "gzip_level", "backoff_initial_ms",
               "backoff_max_ms", "connect_timeout_ms", "request_timeout_ms"});
    auto& s = c.shipper;
    s.batch.max_bytes = get<std::size_t>(b, "max_bytes", wb, s.batch.max_bytes);
    if (s.batch.max_bytes > (90u << 20))
      throw ConfigError("indexer.bulk.max_bytes: at most 90 MiB (engines refuse 100 MiB)");
    s.batch.max_docs = get<std::size_t>(b, "max_docs", wb, s.batch.max_docs);
    s.batch.max_wait = ms(b, "max_wait_ms", wb, s.batch.max_wait);
    s.in_flight = get<std::size_t>(b, "in_flight", wb, s.in_flight);
    if (s.in_flight < 1 || s.in_flight > 32) throw ConfigError("indexer.bulk.in_flight: 1 to 32");
    s.gzip = get<bool>(b, "gzip", wb, s.gzip);
    c.http.gzip_level = get<int>(b, "gzip_level", wb, c.http.gzip_level);
    s.backoff.initial = ms(b, "backoff_initial_ms", wb, s.backoff.initial);
    s.backoff.max = ms(b, "backoff_max_ms", wb, s.backoff.max);
    c.http.connect_timeout = ms(b, "connect_timeout_ms", wb, c.http.connect_timeout);
    c.http.request_timeout = ms(b, "request_timeout_ms", wb, c.http.request_timeout);
  }
  if (const YAML::Node s = n["spool"]) {
    const std::string ws = w + ".spool";
    only_keys(s, ws, {"dir", "max_bytes", "segment_bytes", "fsync", "fsync_interval_ms"});
    auto& sp = c.spool;
    sp.dir = get<std::string>(s, "dir", ws, sp.dir.string());
    sp.max_bytes = get<std::uint64_t>(s, "max_bytes", ws, sp.max_bytes);
    sp.segment_bytes = get<std::uint64_t>(s, "segment_bytes", ws, sp.segment_bytes);
    if (sp.segment_bytes < 4096 || sp.segment_bytes > sp.max_bytes)
      throw ConfigError("indexer.spool.segment_bytes: at least 4096 and at most max_bytes");
    if (s["fsync"]) sp.fsync = fsync_policy(get<std::string>(s, "fsync", ws, "interval"));
    sp.fsync_interval = ms(s, "fsync_interval_ms", ws, sp.fsync_interval);
  }
}

}  // namespace salttap::config
