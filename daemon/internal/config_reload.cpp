#include "daemon/internal/config_reload.h"

#include <exception>
#include <tuple>

#include <fmt/ranges.h>

#include "common/log.h"

namespace salttap::daemon {
namespace {

class Differences {
 public:
  template <typename T>
  void check(const char* key, const T& running, const T& loaded) {
    if (!(running == loaded)) keys.emplace_back(key);
  }
  std::vector<std::string> keys;
};

// Every setting a reload cannot apply, by the key an operator writes.
std::vector<std::string> restart_only_changes(const config::Config& a, const config::Config& b) {
  Differences d;
  d.check("master_config", a.master_config, b.master_config);
  d.check("master_id", a.master_id, b.master_id);
  d.check("fleet_id", a.fleet_id, b.fleet_id);
  const auto checkpoint = [](const config::CheckpointConfig& c) { return std::tie(c.enabled, c.path, c.interval); };
  d.check("checkpoint", checkpoint(a.checkpoint), checkpoint(b.checkpoint));
  const auto reconcile = [](const config::ReconcileConfig& r) {
    return std::tie(r.enabled, r.overlap, r.state_interval, r.max_spool_pending);
  };
  d.check("reconcile", reconcile(a.reconcile), reconcile(b.reconcile));
  const auto ui = [](const config::UiConfig& u) {
    return std::tie(u.enabled, u.listen, u.username, u.password, u.password_file);
  };
  d.check("ui", ui(a.ui), ui(b.ui));
  const auto listener = [](const ListenerLimits& l) {
    return std::tie(l.header_timeout, l.idle_timeout, l.request_timeout, l.max_connections, l.max_header_bytes,
                    l.max_target_bytes, l.allowed_hosts);
  };
  d.check("listener", listener(a.listener), listener(b.listener));
  const auto tap = [](const config::TapConfig& t) {
    return std::tie(t.queue.max_events, t.queue.max_bytes, t.journal, t.journal_dir, t.journal_max_bytes,
                    t.journal_segment_bytes);
  };
  d.check("tap", tap(a.tap), tap(b.tap));

  const indexer::IndexerConfig& x = a.indexer;
  const indexer::IndexerConfig& y = b.indexer;
  d.check("indexer (where it comes from)", x.source, y.source);
  d.check("indexer.hosts", x.http.hosts, y.http.hosts);
  d.check("indexer.tls", x.http.tls, y.http.tls);
  const auto auth = [](const indexer::IndexerConfig& c) {
    return std::tie(c.http.auth.username, c.password.value, c.password.env, c.password.file, c.api_key.value,
                    c.api_key.env, c.api_key.file);
  };
  d.check("indexer.auth", auth(x), auth(y));
  d.check("indexer.index_prefix", x.documents.layout.prefix, y.documents.layout.prefix);
  d.check("indexer.index_date", x.documents.layout.index_date, y.documents.layout.index_date);
  d.check("indexer.states_index", x.documents.states, y.documents.states);
  const auto templates = [](const indexer::IndexerConfig& c) {
    return std::tie(c.templates.number_of_shards, c.templates.number_of_replicas, c.templates.retention_days,
                    c.templates.refresh_interval, c.templates.jobs_refresh_interval, c.install_templates);
  };
  d.check(
      "indexer templates (number_of_shards, number_of_replicas, retention_days, refresh_interval, "
      "jobs_refresh_interval, install_templates)",
      templates(x), templates(y));
  const auto bulk = [](const indexer::IndexerConfig& c) {
    const indexer::ShipperConfig& s = c.shipper;
    return std::tie(s.batch.max_bytes, s.batch.max_docs, s.batch.max_wait, s.in_flight, s.gzip, s.backoff.initial,
                    s.backoff.max, c.http.gzip_level, c.http.connect_timeout, c.http.request_timeout);
  };
  d.check("indexer.bulk", bulk(x), bulk(y));
  const auto spool = [](const indexer::SpoolConfig& s) {
    return std::tie(s.dir, s.max_bytes, s.segment_bytes, s.fsync, s.fsync_interval);
  };
  d.check("indexer.spool", spool(x.spool), spool(y.spool));
  return std::move(d.keys);
}

}  // namespace

ReloadPlan plan_reload(const config::Config& running, const config::Config& loaded) {
  ReloadPlan plan{running, restart_only_changes(running, loaded)};
  config::Config& n = plan.next;
  n.correlator = loaded.correlator;
  n.auditor = loaded.auditor;
  n.redactor = loaded.redactor;
  n.alerts = loaded.alerts;
  n.alert_log = loaded.alert_log;
  n.webhook = loaded.webhook;
  n.alert_fire_event = loaded.alert_fire_event;
  n.indexer.documents.take_reloadable(loaded.indexer.documents);
  return plan;
}

ConfigReloader::ConfigReloader(config::Config running, std::string source, Loader load, ReloadTarget& target,
                               const Clock& clock)
    : running_(std::move(running)),
      source_(std::move(source)),
      load_(std::move(load)),
      target_(target),
      clock_(clock) {}

bool ConfigReloader::reload() {
  log::info("reload: reading {}", source_);
  ReloadPlan plan;
  try {
    plan = plan_reload(running_, load_());
    target_.apply(plan.next);
  } catch (const std::exception& e) {
    ++stats_.failed;
    log::error("reload: not applied, the running config stays: {}", e.what());
    return false;
  }
  running_ = std::move(plan.next);
  ++stats_.ok;
  stats_.last_ok = clock_.now();
  if (!plan.needs_restart.empty())
    log::warn("reload: changed in {} but needs a restart (the running value is kept): {}", source_,
              fmt::join(plan.needs_restart, ", "));
  log::info("reload: reloaded {}: correlator, audit, redaction, alerts and document filters now as in the file",
            source_);
  return true;
}

void publish_reload_metrics(Metrics& metrics, const ReloadStats& stats) {
  metrics.counter(MetricId::config_reloads, {"ok"}, stats.ok);
  metrics.counter(MetricId::config_reloads, {"error"}, stats.failed);
  metrics.gauge(MetricId::config_last_reload_timestamp_seconds,
                static_cast<double>(stats.last_ok) / static_cast<double>(kMicrosPerSecond));
}

}  // namespace salttap::daemon
