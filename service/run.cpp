#include "service/run.h"

#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "alerting/configured_outlets.h"
#include "alerting/spool_full_alert.h"
#include "common/log.h"
#include "common/metrics_server.h"
#include "correlator/correlator_metrics.h"
#include "indexer/document_metrics.h"
#include "indexer/indexer_service.h"
#include "service/document_pipeline.h"
#include "service/signals.h"
#include "tap/event_source.h"
#include "tap/tap_metrics.h"

namespace salttap::service {

indexer::IndexerConfig effective_indexer_config(const Config& config, const tap::MasterBus& master) {
  indexer::IndexerConfig ix = config.indexer;
  if (!ix.enabled && !master.elasticsearch_yaml.empty()) {
    apply_returner_block(YAML::Load(master.elasticsearch_yaml), ix);
    ix.source = "elasticsearch: block of " + master.config_path;
  }
  if (!ix.enabled)
    throw ConfigError("no indexer configured: add an indexer: section (or Salt's elasticsearch: returner block) to "
                      "salttap's config, or an elasticsearch: block to the master config");
  resolve_secrets(ix);
  for (const auto& note : ix.notes) log::info("indexer: {}", note);
  return ix;
}

int run_daemon(const RunOptions& options) {
  install_stop_signals();
  const tap::MasterBus master = options.bus.master();
  Config cfg = options.config;
  cfg.indexer = effective_indexer_config(cfg, master);
  if (cfg.master_id.empty()) cfg.master_id = master.id;  // else the host name (effective_master_id)
  log::info("run: indexing to {} ({}), spool {}", fmt::join(cfg.indexer.http.hosts, ", "), cfg.indexer.source,
            cfg.indexer.spool.dir.string());

  indexer::IndexerService indexer(cfg.indexer);
  SystemClock clock;
  DocumentPipeline pipeline(cfg, clock);
  alerting::AlertOutlets outlets = alerting::make_alert_outlets(alert_outlets_config(cfg, options.bus));
  for (const auto& o : outlets.all) pipeline.add_alert_outlet(o);

  tap::ReaderOptions reader_options;
  reader_options.endpoint = options.bus.pub();
  reader_options.limits = options.limits;
  tap::EventQueue queue(options.queue);
  tap::EventSourcePtr source = tap::make_event_source(reader_options, queue);

  Metrics metrics;
  std::unique_ptr<MetricsServer> metrics_server;
  if (!options.metrics_listen.empty())
    metrics_server = std::make_unique<MetricsServer>(options.metrics_listen, metrics, [&] {
      return source->stats().connected.load() && indexer.setup_done();
    });

  indexer.start();
  source->start();
  bool flat_known = false;
  std::uint64_t full_episodes = indexer.spool_ref().stats().full_episodes;
  std::vector<tap::Event> events;
  auto last_publish = std::chrono::steady_clock::now() - std::chrono::hours(1);
  while (!stop_requested()) {
    events.clear();
    queue.pop_all(events, std::chrono::milliseconds(200));
    for (const tap::Event& e : events) {
      pipeline.advance();
      pipeline.on_event(e);
    }
    pipeline.advance();
    if (!flat_known) {
      if (const auto flat = indexer.return_flat()) {
        pipeline.documents().set_return_flat(*flat);
        flat_known = true;
      }
    }
    const auto docs = pipeline.take_docs();
    indexer.spool(docs, [] { return stop_requested(); });
    if (const auto spool = indexer.spool_ref().stats(); spool.full_episodes > full_episodes) {
      // One alert per full-spool episode, through every outlet (log, webhook, bus, alerts index).
      full_episodes = spool.full_episodes;
      pipeline.alerts().dispatch(
          alerting::make_spool_full_alert(effective_master_id(cfg), clock.now(), spool.bytes, cfg.indexer.spool));
    }
    const auto now = std::chrono::steady_clock::now();
    if (metrics_server && now - last_publish >= std::chrono::seconds(1)) {
      last_publish = now;
      tap::publish_tap_metrics(metrics, source->stats(), queue.stats());
      correlator::publish_correlator_metrics(metrics, pipeline.correlator());
      outlets.publish(metrics, pipeline.alerts());
      indexer::publish_document_metrics(metrics, pipeline.documents().stats());
      indexer.publish(metrics);
    }
  }
  log::info("run: stopping; {} documents wait in the spool", indexer.pending());
  source->stop();
  indexer.spool(pipeline.take_docs(), [] { return true; });
  indexer.stop(options.drain);
  outlets.stop();
  log::info("run: stopped; {} documents left in the spool for the next start", indexer.pending());
  return 0;
}

}  // namespace salttap::service
