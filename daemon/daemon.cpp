#include "daemon/daemon.h"

#include <unistd.h>

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

int run_daemon(const DaemonOptions& options) {
  install_stop_signals();
  install_reload_signal();
  // Warn, not refuse: masters before Salt 3006's packages, and many installs
  // since, run as root with the bus socket and job cache root's alone; a
  // refusal would stop the record there, where a warning leaves the choice.
  if (const auto warning = root_warning(::geteuid())) log::warn("run: {}", *warning);
  const tap::MasterBus master = options.bus.master();
  const config::Config cfg = config::run_config(options.config, master);
  log::info("run: indexing to {} ({}), spool {}", fmt::join(cfg.indexer.http.hosts, ", "), cfg.indexer.source,
            cfg.indexer.spool.dir.string());

  // Documents from the job cache (reconcile) have a spool lane of their own,
  // so live jobs never queue behind them. Always on in `run`: a lane a
  // reconcile left unshipped is shipped even when reconcile is off now.
  indexer::IndexerConfig indexer_config = cfg.indexer;
  indexer_config.backfill_lane = true;
  indexer::IndexerService indexer(indexer_config);
  SystemClock clock;
  pipeline::DocumentPipeline pipeline(cfg, clock);
  // The bus target of alert events, resolved once when first needed: the bus is not reloaded.
  std::optional<alerting::BusTarget> fire_target;
  const auto outlets_for = [&](const config::Config& c) {
    if (c.alert_fire_event && !fire_target) fire_target = alerting::BusTarget{options.bus.pub(), options.bus.pull()};
    return config::alert_outlets_config(c, fire_target);
  };
  alerting::ReloadableOutlets outlets(outlets_for(cfg));
  for (const auto& o : outlets.current().all) pipeline.add_alert_outlet(o);
  pipeline::SpoolSink sink(indexer);
  pipeline::SpoolSink backfill_sink(indexer, indexer::Lane::backfill);
  std::unique_ptr<recovery::CheckpointKeeper> checkpoint;
  if (cfg.checkpoint.enabled) {
    checkpoint = std::make_unique<recovery::CheckpointKeeper>(config::checkpoint_path(cfg), cfg.checkpoint.interval,
                                                              pipeline.correlator(), clock);
    checkpoint->restore();  // before the first live event
  } else {
    log::info("run: checkpoint off: jobs open at shutdown will be orphans after a restart");
  }

  tap::ReaderOptions reader_options;
  reader_options.endpoint = options.bus.pub();
  reader_options.limits = options.limits;
  tap::EventQueue queue(cfg.tap.queue);
  // Before the reader starts: frames a previous run left in the journal go
  // first, and the reader sends new ones behind them.
  std::unique_ptr<tap::TapJournal> journal;
  if (cfg.tap.journal) {
    journal = std::make_unique<tap::TapJournal>(
        tap::JournalConfig{config::tap_journal_dir(cfg), cfg.tap.journal_max_bytes, cfg.tap.journal_segment_bytes,
                           options.limits.max_frame_bytes});
    queue.attach_journal(*journal, options.limits);
    log::info("run: tap queue {} events / {} bytes, then the journal in {} (max_bytes {})", cfg.tap.queue.max_events,
              cfg.tap.queue.max_bytes, journal->config().dir.string(), cfg.tap.journal_max_bytes);
  } else {
    log::info(
        "run: tap queue {} events / {} bytes; no journal (tap.journal.enabled: false): a burst beyond it is "
        "dropped",
        cfg.tap.queue.max_events, cfg.tap.queue.max_bytes);
  }
  tap::EventSourcePtr source = tap::make_event_source(reader_options, queue);

  Metrics metrics;
  // The job browser under /ui/ beside /metrics; never beyond this host without a password.
  std::unique_ptr<web::UiService> ui;
  if (cfg.ui.enabled && !options.metrics_listen.empty()) {
    if (cfg.ui.username.empty() && !web::loopback_listen(options.metrics_listen))
      log::warn("run: the job browser is off: {} is beyond this host and ui: sets no username and password",
                options.metrics_listen);
    else
      ui = web::make_ui_service(cfg.indexer.http, cfg.indexer.documents.layout,
                                web::UiAuth(cfg.ui.username, config::ui_password(cfg.ui)), clock, false,
                                web::HostAllowList(options.metrics_listen, cfg.listener.allowed_hosts));
  }
  std::unique_ptr<MetricsServer> metrics_server;
  if (!options.metrics_listen.empty())
    metrics_server = std::make_unique<MetricsServer>(
        options.metrics_listen, metrics, [&] { return source->stats().connected.load() && indexer.setup_done(); },
        ui ? ui->handler() : WebHandler{}, cfg.listener);
  if (ui && metrics_server)
    log::info("run: the job browser is at http://{}:{}/ui/",
              options.metrics_listen.substr(0, options.metrics_listen.rfind(':')), metrics_server->port());

  std::unique_ptr<recovery::ReconcileStateFile> coverage;
  std::unique_ptr<recovery::Reconciler> reconciler;
  if (!cfg.reconcile.enabled) {
    log::info("run: reconcile is off (reconcile.enabled: false): jobs run while salttap was away are not indexed");
  } else if (const auto why = jobcache::no_local_job_cache(master)) {
    log::warn("run: no reconcile: {} sets {}; salttap reconciles from the local_cache job cache only",
              master.config_path, *why);
  } else {
    coverage = std::make_unique<recovery::ReconcileStateFile>(cfg.indexer.spool.dir / "reconcile.state");
    reconciler = std::make_unique<recovery::Reconciler>(
        cfg, jobcache::job_cache_location(master, std::nullopt, "reconcile"), *coverage, pipeline, backfill_sink,
        [&indexer] {
          return recovery::SpoolPending{indexer.waiting(indexer::Lane::live), indexer.pending(indexer::Lane::backfill)};
        },
        clock);
  }

  PipelineReload reload_target(pipeline, outlets, outlets_for, reconciler.get());
  ConfigReloader reloader(
      cfg, options.config_path.empty() ? std::string("the defaults (no --config)") : options.config_path,
      [&] {
        return config::run_config(
            options.config_path.empty() ? config::default_config() : config::load_config(options.config_path), master);
      },
      reload_target, clock);

  SystemdNotifier notifier;
  DaemonHeartbeat heartbeat(notifier, real_steady_time().now(), [&] {
    return DaemonSnapshot{source->stats().events.load(), source->stats().connected.load(), indexer.pending(),
                          indexer.setup_done(), indexer.engine_reachable()};
  });
  if (const auto interval = notifier.watchdog_interval())
    log::info("run: systemd watchdog every {} ms", interval->count() / 1000);

  pipeline::EventLoopOptions loop;
  // Asked every backpressure wait while the spool is full: the pipeline is
  // waiting on purpose, not wedged, so the watchdog is fed there too.
  loop.give_up = [&] {
    heartbeat.tick(real_steady_time().now());
    return stop_requested();
  };
  loop.give_up_at_end = [] { return true; };  // stopping: what does not fit now is counted lost
  auto last_publish = real_steady_time().now() - std::chrono::hours(1);
  bool reconcile_busy = false;
  loop.after_batch = [&] {
    if (checkpoint) checkpoint->maybe_write();  // the batch's documents are in the spool already
    if (take_reload_request()) {
      // Between two batches: no event is half-processed, the batch's documents are spooled.
      heartbeat.reloading();
      reloader.reload();
      heartbeat.reloaded();
      if (metrics_server) last_publish -= std::chrono::hours(1);  // the outcome on /metrics now
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
    publish_build_info(metrics);
    publish_reload_metrics(metrics, reloader.stats());
    tap::publish_tap_metrics(metrics, source->stats(), queue.stats());
    correlator::publish_correlator_metrics(metrics, pipeline.correlator());
    outlets.publish(metrics, pipeline.alerts());
    indexer::publish_document_metrics(metrics, pipeline.documents().stats());
    indexer.publish(metrics);
    if (ui) ui->metrics().publish(metrics);
    if (checkpoint) recovery::publish_checkpoint_metrics(metrics, checkpoint->file().stats());
    if (reconciler)
      recovery::publish_reconcile_metrics(metrics, reconciler->counts(), reconciler->backfill_counts(),
                                          reconciler->cache_stats(), reconciler->pass_running());
  };

  indexer.start();
  source->start();
  if (reconciler) reconciler->start();
  sink.watch_journal(journal.get());
  pipeline::LiveFeed feed(queue, [] { return stop_requested(); });
  feed.set_busy([&] { return reconcile_busy; });
  pipeline::run_event_loop(feed, pipeline, sink, loop);
  heartbeat.stopping();
  if (checkpoint) checkpoint->write_at_shutdown();  // the pipeline has stopped: nothing changes the jobs any more
  if (reconciler) reconciler->stop();
  log::info("run: stopping; {} documents wait in the spool", indexer.pending());
  source->stop();
  indexer.stop(options.drain);
  outlets.stop();
  log::info("run: stopped; {} documents left in the spool for the next start", indexer.pending());
  return 0;
}

}  // namespace salttap::daemon
