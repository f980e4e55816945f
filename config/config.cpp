#include "config/config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/log.h"
#include "common/yaml_fields.h"

namespace salttap::config {
namespace {

using yaml::get;
using yaml::only_keys;
using yaml::strings;

Micros seconds(double s) { return static_cast<Micros>(s * kMicrosPerSecond); }

void load_correlator(const YAML::Node& n, Config& c) {
  only_keys(n, "correlator",
            {"deadlines", "missing_after_seconds", "orphan_settle_seconds", "late_grace_seconds", "max_jobs",
             "memory_budget_mb", "noise_funs"});
  if (!n) return;
  auto& cc = c.correlator;
  if (const YAML::Node d = n["deadlines"]) {
    if (!d.IsSequence()) throw ConfigError("correlator.deadlines: expected a list of {fun, seconds}");
    cc.deadlines.clear();
    for (const auto& rule : d) {
      only_keys(rule, "correlator.deadlines[]", {"fun", "seconds"});
      if (!rule["fun"] || !rule["seconds"]) throw ConfigError("correlator.deadlines[]: needs fun and seconds");
      cc.deadlines.push_back({rule["fun"].as<std::string>(), seconds(get<double>(rule, "seconds", "deadlines", 0))});
    }
  }
  if (n["missing_after_seconds"]) cc.missing_after = seconds(get<double>(n, "missing_after_seconds", "correlator", 0));
  cc.orphan_settle = seconds(get<double>(n, "orphan_settle_seconds", "correlator", 10));
  cc.late_grace = seconds(get<double>(n, "late_grace_seconds", "correlator", 3600));
  cc.max_jobs = get<std::size_t>(n, "max_jobs", "correlator", cc.max_jobs);
  cc.memory_budget = static_cast<std::size_t>(
      get<double>(n, "memory_budget_mb", "correlator", static_cast<double>(cc.memory_budget >> 20)) * (1 << 20));
  if (cc.memory_budget == 0) throw ConfigError("correlator.memory_budget_mb: must be more than 0");
  if (n["noise_funs"]) cc.noise_funs = strings(n["noise_funs"], "correlator.noise_funs");
}

void load_alerts(const YAML::Node& n, Config& c) {
  only_keys(n, "alerts",
            {"on_failed", "on_missing", "min_risk", "list_cap", "log", "webhook", "fire_event", "dedupe",
             "dedupe_timeout_ms", "dedupe_orphan_delay_seconds"});
  if (!n) return;
  c.alert_dedupe = get<std::string>(n, "dedupe", "alerts", "none");
  if (c.alert_dedupe != "none" && c.alert_dedupe != "engine")
    throw ConfigError("alerts.dedupe: none or engine, got '" + c.alert_dedupe + "'");
  const auto timeout = get<std::int64_t>(n, "dedupe_timeout_ms", "alerts", 2000);
  if (timeout < 1 || timeout > 60'000) throw ConfigError("alerts.dedupe_timeout_ms: 1 to 60000");
  c.alert_dedupe_timeout = std::chrono::milliseconds(timeout);
  const auto delay = get<std::int64_t>(n, "dedupe_orphan_delay_seconds", "alerts", 5);
  if (delay < 0 || delay > 3600) throw ConfigError("alerts.dedupe_orphan_delay_seconds: 0 to 3600");
  c.alert_dedupe_orphan_delay = std::chrono::seconds(delay);
  c.alerts.on_failed = get<bool>(n, "on_failed", "alerts", true);
  c.alerts.on_missing = get<bool>(n, "on_missing", "alerts", true);
  if (n["min_risk"]) {
    const auto level = correlator::parse_risk_level(n["min_risk"].as<std::string>());
    if (!level) throw ConfigError("alerts.min_risk: none, low, medium, high or critical");
    c.alerts.min_risk = *level;
  }
  c.alerts.list_cap = get<std::size_t>(n, "list_cap", "alerts", 50);
  c.alert_log = get<bool>(n, "log", "alerts", true);
  c.alert_fire_event = get<bool>(n, "fire_event", "alerts", false);
  if (const YAML::Node w = n["webhook"]) {
    only_keys(w, "alerts.webhook",
              {"url", "headers", "timeout_seconds", "max_attempts", "backoff_initial_ms", "backoff_max_ms", "tls"});
    alerting::WebhookConfig hook;
    hook.url = get<std::string>(w, "url", "alerts.webhook", "");
    if (hook.url.empty()) throw ConfigError("alerts.webhook.url: required");
    hook.headers = strings(w["headers"], "alerts.webhook.headers");
    hook.timeout =
        std::chrono::milliseconds(static_cast<long>(get<double>(w, "timeout_seconds", "alerts.webhook", 10) * 1000));
    hook.retry.max_attempts = get<int>(w, "max_attempts", "alerts.webhook", 8);
    hook.retry.backoff.initial = std::chrono::milliseconds(get<long>(w, "backoff_initial_ms", "alerts.webhook", 1000));
    hook.retry.backoff.max = std::chrono::milliseconds(get<long>(w, "backoff_max_ms", "alerts.webhook", 60000));
    if (const YAML::Node t = w["tls"]) hook.tls = parse_tls(t, "alerts.webhook.tls");
    c.webhook = hook;
  }
}

void load_reconcile(const YAML::Node& n, Config& c) {
  only_keys(n, "reconcile", {"enabled", "overlap_seconds", "state_interval_seconds", "max_spool_pending"});
  if (!n) return;
  auto& r = c.reconcile;
  r.enabled = get<bool>(n, "enabled", "reconcile", true);
  r.overlap = seconds(get<double>(n, "overlap_seconds", "reconcile", 5));
  r.state_interval = seconds(get<double>(n, "state_interval_seconds", "reconcile", 10));
  r.max_spool_pending = get<std::uint64_t>(n, "max_spool_pending", "reconcile", r.max_spool_pending);
  if (r.overlap < 0) throw ConfigError("reconcile.overlap_seconds: must not be negative");
  if (r.state_interval <= 0) throw ConfigError("reconcile.state_interval_seconds: must be positive");
}

void load_checkpoint(const YAML::Node& n, Config& c) {
  only_keys(n, "checkpoint", {"enabled", "path", "interval_seconds"});
  if (!n) return;
  c.checkpoint.enabled = get<bool>(n, "enabled", "checkpoint", true);
  c.checkpoint.path = get<std::string>(n, "path", "checkpoint", "");
  const auto interval = get<double>(n, "interval_seconds", "checkpoint", 10);
  if (!(interval >= 0.1 && interval <= 86400)) throw ConfigError("checkpoint.interval_seconds: between 0.1 and 86400");
  c.checkpoint.interval = std::chrono::milliseconds(static_cast<long>(interval * 1000));
}

void load_ui(const YAML::Node& n, Config& c) {
  only_keys(n, "ui", {"enabled", "listen", "username", "password", "password_file"});
  if (!n) return;
  auto& u = c.ui;
  u.enabled = get<bool>(n, "enabled", "ui", true);
  u.listen = get<std::string>(n, "listen", "ui", u.listen);
  u.username = get<std::string>(n, "username", "ui", "");
  u.password = get<std::string>(n, "password", "ui", "");
  u.password_file = get<std::string>(n, "password_file", "ui", "");
  if (u.listen.rfind(':') == std::string::npos) throw ConfigError("ui.listen: expected HOST:PORT");
  if (!u.password.empty() && !u.password_file.empty())
    throw ConfigError("ui: password and password_file: give one of them");
  if (u.username.empty() != (u.password.empty() && u.password_file.empty()))
    throw ConfigError("ui: username needs a password (or password_file), and a password a username");
  if (u.username.find(':') != std::string::npos) throw ConfigError("ui.username: must not contain ':'");
}

// A duration in milliseconds within [lo, hi].
std::chrono::milliseconds millis(const YAML::Node& n, const char* key, std::chrono::milliseconds fallback,
                                 std::uint64_t lo, std::uint64_t hi) {
  const auto v = get<std::uint64_t>(n, key, "listener", static_cast<std::uint64_t>(fallback.count()));
  if (v < lo || v > hi) throw ConfigError(fmt::format("listener.{}: between {} and {}", key, lo, hi));
  return std::chrono::milliseconds(v);
}

void load_listener(const YAML::Node& n, Config& c) {
  only_keys(n, "listener",
            {"header_timeout_ms", "idle_timeout_ms", "request_timeout_ms", "max_connections", "max_header_bytes",
             "max_target_bytes", "allowed_hosts"});
  if (!n) return;
  auto& l = c.listener;
  l.header_timeout = millis(n, "header_timeout_ms", l.header_timeout, 100, 600'000);
  l.idle_timeout = millis(n, "idle_timeout_ms", l.idle_timeout, 100, 3'600'000);
  l.request_timeout = millis(n, "request_timeout_ms", l.request_timeout, 100, 3'600'000);
  l.max_connections = get<std::size_t>(n, "max_connections", "listener", l.max_connections);
  if (l.max_connections < 1 || l.max_connections > 65536)
    throw ConfigError("listener.max_connections: between 1 and 65536");
  l.max_header_bytes = get<std::size_t>(n, "max_header_bytes", "listener", l.max_header_bytes);
  if (l.max_header_bytes < 1024 || l.max_header_bytes > (1u << 20))
    throw ConfigError("listener.max_header_bytes: between 1024 and 1048576");
  l.max_target_bytes = get<std::size_t>(n, "max_target_bytes", "listener", l.max_target_bytes);
  if (l.max_target_bytes < 256 || l.max_target_bytes > l.max_header_bytes)
    throw ConfigError("listener.max_target_bytes: at least 256 and at most max_header_bytes");
  if (n["allowed_hosts"]) l.allowed_hosts = strings(n["allowed_hosts"], "listener.allowed_hosts");
  for (const auto& h : l.allowed_hosts)
    if (h.empty() || h.find_first_of(":/@ \t") != std::string::npos)
      throw ConfigError("listener.allowed_hosts: a host name without port, scheme or path, got '" + h + "'");
}

void load_tap(const YAML::Node& n, Config& c) {
  only_keys(n, "tap", {"queue_max_events", "queue_max_bytes", "journal"});
  if (!n) return;
  auto& t = c.tap;
  t.queue.max_events = get<std::size_t>(n, "queue_max_events", "tap", t.queue.max_events);
  t.queue.max_bytes = get<std::size_t>(n, "queue_max_bytes", "tap", t.queue.max_bytes);
  if (t.queue.max_events < 1) throw ConfigError("tap.queue_max_events: at least 1");
  if (t.queue.max_bytes < 1024) throw ConfigError("tap.queue_max_bytes: at least 1024");
  const YAML::Node j = n["journal"];
  only_keys(j, "tap.journal", {"enabled", "dir", "max_bytes", "segment_bytes"});
  if (!j) return;
  t.journal = get<bool>(j, "enabled", "tap.journal", true);
  t.journal_dir = get<std::string>(j, "dir", "tap.journal", "");
  t.journal_max_bytes = get<std::uint64_t>(j, "max_bytes", "tap.journal", t.journal_max_bytes);
  t.journal_segment_bytes = get<std::uint64_t>(j, "segment_bytes", "tap.journal", t.journal_segment_bytes);
  if (t.journal_segment_bytes < 4096 || t.journal_segment_bytes > t.journal_max_bytes)
    throw ConfigError("tap.journal.segment_bytes: at least 4096 and at most max_bytes");
}

std::filesystem::path state_directory(const Config& config) {
  const std::filesystem::path spool = config.indexer.spool.dir.lexically_normal();
  std::filesystem::path state = spool.has_filename() ? spool.parent_path() : spool.parent_path().parent_path();
  if (state.empty()) state = ".";
  return state;
}

}  // namespace

std::filesystem::path checkpoint_path(const Config& config) {
  if (!config.checkpoint.path.empty()) return config.checkpoint.path;
  return state_directory(config) / "correlator.checkpoint";
}

std::filesystem::path tap_journal_dir(const Config& config) {
  if (!config.tap.journal_dir.empty()) return config.tap.journal_dir;
  return state_directory(config) / "tap-journal";
}

std::filesystem::path fleet_state_path(const Config& config) {
  if (!config.fleet.state_path.empty()) return config.fleet.state_path;
  return state_directory(config) / "fleet.state";
}

std::filesystem::path reconcile_state_path(const Config& config) {
  return config.indexer.spool.dir / "reconcile.state";
}

Config default_config() {
  Config c;
  c.auditor = std::make_shared<correlator::Auditor>(correlator::Auditor::default_rules());
  c.redactor = std::make_shared<correlator::Redactor>();
  return c;
}

Config load_config(const std::string& path) {
  Config c = default_config();
  try {
    const YAML::Node root = YAML::LoadFile(path);
    if (root.IsNull()) return c;
    only_keys(root, "top level",
              {"master_config", "master_id", "fleet_id", "correlator", "audit", "redaction", "alerts", "checkpoint",
               "reconcile", "indexer", "elasticsearch", "ui", "tap", "listener", "fleet"});
    if (root["master_config"]) c.master_config = root["master_config"].as<std::string>();
    c.master_id = get<std::string>(root, "master_id", "master_id", "");
    c.fleet_id = get<std::string>(root, "fleet_id", "fleet_id", "");
    load_correlator(root["correlator"], c);
    if (const YAML::Node a = root["audit"]) {
      only_keys(a, "audit", {"default_rules", "rules"});
      std::vector<correlator::AuditRule> rules;
      if (get<bool>(a, "default_rules", "audit", true)) rules = correlator::Auditor::default_rules();
      for (auto& r : correlator::parse_audit_rules(a["rules"])) rules.push_back(std::move(r));
      c.auditor = std::make_shared<correlator::Auditor>(std::move(rules));
    }
    if (const YAML::Node r = root["redaction"])
      c.redactor = std::make_shared<correlator::Redactor>(correlator::parse_redaction_config(r));
    load_alerts(root["alerts"], c);
    load_reconcile(root["reconcile"], c);
    load_checkpoint(root["checkpoint"], c);
    load_ui(root["ui"], c);
    load_listener(root["listener"], c);
    load_tap(root["tap"], c);
    c.fleet = fleet::parse_fleet_config(root["fleet"]);
    // The returner block first: salttap's own section refines it.
    apply_returner_block(root["elasticsearch"], c.indexer);
    apply_indexer_section(root["indexer"], c.indexer);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", path, e.what()));
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: {}", path, e.what()));
  } catch (const std::invalid_argument& e) {
    throw ConfigError(fmt::format("{}: {}", path, e.what()));
  }
  return c;
}

alerting::OutletsConfig alert_outlets_config(const Config& config, const BusLocation& bus) {
  std::optional<alerting::BusTarget> fire;
  if (config.alert_fire_event) fire = alerting::BusTarget{bus.pub(), bus.pull()};
  return alert_outlets_config(config, fire);
}

alerting::OutletsConfig alert_outlets_config(const Config& config, const std::optional<alerting::BusTarget>& fire) {
  alerting::OutletsConfig o;
  o.log = config.alert_log;
  o.webhook = config.webhook;
  if (config.alert_fire_event) o.fire = fire;
  if (config.alert_dedupe == "engine") {
    if (!config.indexer.enabled) {
      log::warn("alerts.dedupe: engine, but no engine is configured (indexer:): every alert is delivered");
    } else {
      alerting::DedupeConfig d;
      d.http = config.indexer.http;
      d.layout = config.indexer.documents.layout;
      d.master = config.master_id;
      d.fleet = config.fleet_id.empty() ? config.master_id : config.fleet_id;
      d.timeout = config.alert_dedupe_timeout;
      d.orphan_delay = config.alert_dedupe_orphan_delay;
      o.dedupe = std::move(d);
    }
  }
  return o;
}

}  // namespace salttap::config
