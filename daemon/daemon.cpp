#include "daemon/daemon.h"

#include <unistd.h>

#include <utility>

#include <fmt/ranges.h>

#include "alerting/configured_outlets.h"
#include "alerting/reloadable_outlets.h"
#include "common/access_advice.h"
#include "common/log.h"
#include "common/metrics_server.h"
#include "common/steady_time.h"
#include "common/version.h"
#include "config/resolve.h"
#include "correlator/correlator_metrics.h"
#include "daemon/internal/config_reload.h"
#include "daemon/internal/heartbeat.h"
#include "daemon/internal/pipeline_reload.h"
#include "daemon/internal/systemd_notifier.h"
#include "daemon/signals.h"
#include "fleet/fleet_keeper.h"
#include "fleet/fleet_metrics.h"
#include "indexer/document_metrics.h"
#include "indexer/indexer_service.h"
#include "jobcache/job_cache_location.h"
#include "pipeline/document_pipeline.h"
#include "pipeline/document_sinks.h"
#include "pipeline/event_loop.h"
#include "recovery/checkpoint_keeper.h"
#include "recovery/reconcile_state.h"
#include "recovery/reconciler.h"
#include "tap/event_source.h"
#include "tap/tap_metrics.h"
#include "web/job_browser.h"

namespace salttap::daemon {
namespace {

config::Config resolved_config(const DaemonOptions& options, const tap::MasterBus& master) {
  config::Config cfg = config::run_config(options.config, master);
  log::info("run: indexing to {} ({}), spool {}", fmt::join(cfg.indexer.http.hosts, ", "), cfg.indexer.source,
            cfg.indexer.spool.dir.string());
  return cfg;
}

// Documents from the job cache (reconcile) have a spool lane of their own,
// so live jobs never queue behind them. Always on in `run`: a lane a
// reconcile left unshipped is shipped even when reconcile is off now.
indexer::IndexerConfig with_backfill_lane(indexer::IndexerConfig config) {
  config.backfill_lane = true;
  return config;
}

std::unique_ptr<recovery::CheckpointKeeper> restored_checkpoint(const config::Config& cfg,
                                                                pipeline::DocumentPipeline& pipeline,
                                                                const Clock& clock) {
  if (!cfg.checkpoint.enabled) {
    log::info("run: checkpoint off: jobs open at shutdown will be orphans after a restart");
    return nullptr;
  }
  auto checkpoint = std::make_unique<recovery::CheckpointKeeper>(config::checkpoint_path(cfg), cfg.checkpoint.interval,
                                                                 pipeline.correlator(), clock);
  checkpoint->restore();  // before the first live event
  return checkpoint;
}

// The fleet's table from the state file, before the first live event; the
// pipeline hands it every event.
std::unique_ptr<fleet::FleetKeeper> fleet_keeper(const config::Config& cfg, pipeline::DocumentPipeline& pipeline,
                                                 const Clock& clock) {
  if (!cfg.fleet.enabled) {
    log::info("run: fleet off (fleet.enabled: false): no silent minion alerts");
    return nullptr;
  }
  auto keeper = std::make_unique<fleet::FleetKeeper>(cfg.fleet, cfg.fleet.keys_dir, cfg.fleet.state_path,
                                                     pipeline.master_id(), clock);
  pipeline.set_fleet(&keeper->tracker());
  log::info("run: fleet: accepted keys from {}, state in {}, swept every {} s", cfg.fleet.keys_dir.string(),
            cfg.fleet.state_path.string(), cfg.fleet.sweep / kMicrosPerSecond);
  return keeper;
}

// Attached before the reader starts: frames a previous run left in the
// journal go first, and the reader sends new ones behind them.
std::unique_ptr<tap::TapJournal> attached_journal(const config::Config& cfg, const tap::DecodeLimits& limits,
                                                  tap::EventQueue& queue) {
  if (!cfg.tap.journal) {
    log::info(
        "run: tap queue {} events / {} bytes; no journal (tap.journal.enabled: false): a burst beyond it is "
        "dropped",
        cfg.tap.queue.max_events, cfg.tap.queue.max_bytes);
    return nullptr;
  }
  auto journal = std::make_unique<tap::TapJournal>(tap::JournalConfig{
      config::tap_journal_dir(cfg), cfg.tap.journal_max_bytes, cfg.tap.journal_segment_bytes, limits.max_frame_bytes});
  queue.attach_journal(*journal, limits);
  log::info("run: tap queue {} events / {} bytes, then the journal in {} (max_bytes {})", cfg.tap.queue.max_events,
            cfg.tap.queue.max_bytes, journal->config().dir.string(), cfg.tap.journal_max_bytes);
  return journal;
}

tap::EventSourcePtr bus_source(const DaemonOptions& options, tap::EventQueue& queue) {
  tap::ReaderOptions reader_options;
  reader_options.endpoint = options.bus.pub();
  reader_options.limits = options.limits;
  return tap::make_event_source(reader_options, queue);
}

// The job browser under /ui/ beside /metrics; never beyond this host without a password.
std::unique_ptr<web::UiService> job_browser(const config::Config& cfg, const std::string& listen, const Clock& clock) {
  if (!cfg.ui.enabled || listen.empty()) return nullptr;
  if (cfg.ui.username.empty() && !web::loopback_listen(listen)) {
    log::warn("run: the job browser is off: {} is beyond this host and ui: sets no username and password", listen);
    return nullptr;
  }
  return web::make_ui_service(cfg.indexer.http, cfg.indexer.documents.layout,
                              web::UiAuth(cfg.ui.username, config::ui_password(cfg.ui)), clock, false,
                              web::HostAllowList(listen, cfg.listener.allowed_hosts));
}

}  // namespace

struct Daemon::Parts {
  explicit Parts(DaemonOptions opts);

  alerting::OutletsConfig outlets_for(const config::Config& c);
  std::unique_ptr<MetricsServer> metrics_listener();
  std::unique_ptr<recovery::Reconciler> reconciler_for_cache();
  void after_batch();
  void publish_metrics();

  const DaemonOptions options;
  const tap::MasterBus master;
  const config::Config cfg;
  SystemClock clock;
  indexer::IndexerService indexer;
  pipeline::DocumentPipeline pipeline;
  // The bus target of alert events, resolved once when first needed: the bus is not reloaded.
  std::optional<alerting::BusTarget> fire_target;
  alerting::ReloadableOutlets outlets;
  pipeline::SpoolSink sink;
  pipeline::SpoolSink backfill_sink;
  std::unique_ptr<recovery::CheckpointKeeper> checkpoint;
  std::unique_ptr<fleet::FleetKeeper> fleet;
  tap::EventQueue queue;
  std::unique_ptr<tap::TapJournal> journal;
  tap::EventSourcePtr source;
  Metrics metrics;
  std::unique_ptr<web::UiService> ui;
  std::unique_ptr<MetricsServer> metrics_server;
  std::unique_ptr<recovery::ReconcileStateFile> coverage;
  std::unique_ptr<recovery::Reconciler> reconciler;
  PipelineReload reload_target;
  ConfigReloader reloader;
  SystemdNotifier notifier;
  DaemonHeartbeat heartbeat;
  SteadyTime::time_point last_publish = real_steady_time().now() - std::chrono::hours(1);
  bool reconcile_busy = false;
};

Daemon::Parts::Parts(DaemonOptions opts)
    : options(std::move(opts)),
      master(options.bus.master()),
      cfg(resolved_config(options, master)),
      indexer(with_backfill_lane(cfg.indexer)),
      pipeline(cfg, clock),
      outlets(outlets_for(cfg)),
      sink(indexer),
      backfill_sink(indexer, indexer::Lane::backfill),
      checkpoint(restored_checkpoint(cfg, pipeline, clock)),
      fleet(fleet_keeper(cfg, pipeline, clock)),
      queue(cfg.tap.queue),
      journal(attached_journal(cfg, options.limits, queue)),
      source(bus_source(options, queue)),
      ui(job_browser(cfg, options.metrics_listen, clock)),
      metrics_server(metrics_listener()),
      reconciler(reconciler_for_cache()),
      reload_target(
          pipeline, outlets, [this](const config::Config& c) { return outlets_for(c); }, reconciler.get(), fleet.get()),
      reloader(
          cfg, options.config_path.empty() ? std::string("the defaults (no --config)") : options.config_path,
          [this] {
            return config::run_config(
                options.config_path.empty() ? config::default_config() : config::load_config(options.config_path),
                master);
          },
          reload_target, clock),
      heartbeat(notifier, real_steady_time().now(), [this] {
        return DaemonSnapshot{source->stats().events.load(), source->stats().connected.load(), indexer.pending(),
                              indexer.setup_done(), indexer.engine_reachable()};
      }) {
  for (const auto& o : outlets.current().all) pipeline.add_alert_outlet(o);
  if (const auto interval = notifier.watchdog_interval())
    log::info("run: systemd watchdog every {} ms", interval->count() / 1000);
}

alerting::OutletsConfig Daemon::Parts::outlets_for(const config::Config& c) {
  if (c.alert_fire_event && !fire_target) fire_target = alerting::BusTarget{options.bus.pub(), options.bus.pull()};
  return config::alert_outlets_config(c, fire_target);
}

std::unique_ptr<MetricsServer> Daemon::Parts::metrics_listener() {
  if (options.metrics_listen.empty()) return nullptr;
  auto server = std::make_unique<MetricsServer>(
      options.metrics_listen, metrics, [this] { return source->stats().connected.load() && indexer.setup_done(); },
      ui ? ui->handler() : WebHandler{}, cfg.listener, [this] { return indexer.engine_summary(); });
  if (ui)
    log::info("run: the job browser is at http://{}:{}/ui/",
              options.metrics_listen.substr(0, options.metrics_listen.rfind(':')), server->port());
  return server;
}

std::unique_ptr<recovery::Reconciler> Daemon::Parts::reconciler_for_cache() {
  if (!cfg.reconcile.enabled) {
    log::info("run: reconcile is off (reconcile.enabled: false): jobs run while salttap was away are not indexed");
    return nullptr;
  }
  if (const auto why = jobcache::no_local_job_cache(master)) {
    log::warn("run: no reconcile: {} sets {}; salttap reconciles from the local_cache job cache only",
              master.config_path, *why);
    return nullptr;
  }
  coverage = std::make_unique<recovery::ReconcileStateFile>(config::reconcile_state_path(cfg));
  return std::make_unique<recovery::Reconciler>(
      cfg, jobcache::job_cache_location(master, std::nullopt, "reconcile"), *coverage, pipeline, backfill_sink,
      [this] {
        return recovery::SpoolPending{indexer.waiting(indexer::Lane::live), indexer.pending(indexer::Lane::backfill)};
      },
      clock);
}

void Daemon::Parts::after_batch() {
  if (checkpoint) checkpoint->maybe_write();  // the batch's documents are in the spool already
  if (take_reload_request()) {
    // Between two batches: no event is half-processed, the batch's documents are spooled.
    heartbeat.reloading();
    reloader.reload();
    heartbeat.reloaded();
    if (metrics_server) last_publish -= std::chrono::hours(1);  // the outcome on /metrics now
  }
  if (fleet) {
    // Heard: on the bus with nothing waiting in the journal. Anything else
    // is blind time, in which no minion's silence grows.
    const tap::QueueStats q = queue.stats();
    const bool hearing = source->stats().connected.load() && (!q.journal || q.journal->frames == 0);
    pipeline.deliver(fleet->tick(hearing));  // the documents go with the next batch's
  }
  if (reconciler) {
    const tap::QueueStats q = queue.stats();
    // A frame the journal refused is a gap like a queue drop; events still in the journal are not idle.
    const tap::JournalStats j = q.journal.value_or(tap::JournalStats{});
    reconcile_busy = reconciler->tick(source->stats().connected.load(), q.dropped + j.dropped_full + j.dropped_error,
                                      q.depth == 0 && j.frames == 0);
  }
  const auto now = real_steady_time().now();
  heartbeat.tick(now);
  if (!metrics_server || now - last_publish < std::chrono::seconds(1)) return;
  last_publish = now;
  publish_metrics();
}

void Daemon::Parts::publish_metrics() {
  publish_build_info(metrics);
  publish_reload_metrics(metrics, reloader.stats());
  tap::publish_tap_metrics(metrics, source->stats(), queue.stats());
  correlator::publish_correlator_metrics(metrics, pipeline.correlator());
  outlets.publish(metrics, pipeline.alerts());
  indexer::publish_document_metrics(metrics, pipeline.documents().stats());
  indexer.publish(metrics);
  if (ui) ui->metrics().publish(metrics);
  if (fleet) fleet::publish_fleet_metrics(metrics, *fleet);
  if (checkpoint) recovery::publish_checkpoint_metrics(metrics, checkpoint->file().stats());
  if (reconciler)
    recovery::publish_reconcile_metrics(metrics, reconciler->counts(), reconciler->backfill_counts(),
                                        reconciler->cache_stats(), reconciler->pass_running());
}

Daemon::Daemon(const DaemonOptions& options) : parts_(std::make_unique<Parts>(options)) {}

Daemon::~Daemon() = default;

void Daemon::start() {
  Parts& p = *parts_;
  p.indexer.start();
  p.source->start();
  if (p.reconciler) p.reconciler->start();
  p.sink.watch_journal(p.journal.get());
}

void Daemon::run() {
  Parts& p = *parts_;
  pipeline::EventLoopOptions loop;
  // Asked every backpressure wait while the spool is full: the pipeline is
  // waiting on purpose, not wedged, so the watchdog is fed there too.
  loop.give_up = [&p] {
    p.heartbeat.tick(real_steady_time().now());
    return stop_requested();
  };
  loop.give_up_at_end = [] { return true; };  // stopping: what does not fit now is counted lost
  loop.after_batch = [&p] { p.after_batch(); };
  pipeline::LiveFeed feed(p.queue, [] { return stop_requested(); });
  feed.set_busy([&p] { return p.reconcile_busy; });
  pipeline::run_event_loop(feed, p.pipeline, p.sink, loop);
}

void Daemon::stop() {
  Parts& p = *parts_;
  p.heartbeat.stopping();
  if (p.checkpoint) p.checkpoint->write_at_shutdown();  // the pipeline has stopped: nothing changes the jobs any more
  if (p.fleet) p.fleet->write_state();
  if (p.reconciler) p.reconciler->stop();
  log::info("run: stopping; {} documents wait in the spool", p.indexer.pending());
  p.source->stop();
  p.indexer.stop(p.options.drain);
  p.outlets.stop();
  log::info("run: stopped; {} documents left in the spool for the next start", p.indexer.pending());
}

int run_daemon(const DaemonOptions& options) {
  install_stop_signals();
  install_reload_signal();
  // Warn, not refuse: masters before Salt 3006's packages, and many installs
  // since, run as root with the bus socket and job cache root's alone; a
  // refusal would stop the record there, where a warning leaves the choice.
  if (const auto warning = root_warning(::geteuid())) log::warn("run: {}", *warning);
  Daemon daemon(options);
  daemon.start();
  daemon.run();
  daemon.stop();
  return 0;
}

}  // namespace salttap::daemon
