#pragma once
// Every metric salttap exports, in one table: name, type, labels with their
// bounded values, help. Metrics (common/metrics.h) takes a MetricId, never a
// name, so a metric cannot be published without being declared here, with a
// type or a label value other than declared. docs/operations.md ("Metrics")
// documents the same table; tests/unit/common/metric_catalog_test.cpp checks that the
// two agree and that every name follows the scheme:
//   salttap_<component>_<what>[_<unit>][_total]
// component: build, config, tap, correlator, alerting, fleet, minion, indexer, spool, reconcile, ui, listener; units
// in base units (seconds, bytes); counters, and only counters, end in _total.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace salttap {

// summary: _sum and _count, no quantiles; histogram: _bucket{le=...} (cumulative), _sum and _count
enum class MetricType : std::uint8_t { counter, gauge, summary, histogram };
std::string_view to_string(MetricType type);

// One per metric family, in the order of the table (and of /metrics).
enum class MetricId : std::uint8_t {
  // the binary
  build_info,
  // config (run: reloads on SIGHUP)
  config_reloads,
  config_last_reload_timestamp_seconds,
  // tap
  tap_read_bytes,
  tap_frames,
  tap_events,
  tap_skipped_frames,
  tap_skipped_bytes,
  tap_resyncs,
  tap_dropped_events,
  tap_connects,
  tap_disconnects,
  tap_connect_failures,
  tap_connected,
  tap_queue_events,
  tap_queue_bytes,
  tap_journal_bytes,
  tap_journal_frames,
  tap_journal_segments,
  tap_journal_spilled_frames,
  tap_journal_spilled_bytes,
  tap_journal_drained_frames,
  tap_journal_corrupt_records,
  tap_journal_corrupt_bytes,
  tap_journal_write_errors,
  tap_journal_refusing,
  // correlator
  correlator_events,
  correlator_jobs_opened,
  correlator_jobs_settled,
  correlator_returns,
  correlator_late_returns,
  correlator_duplicate_returns,
  correlator_unexpected_returns,
  correlator_missing_minions,
  correlator_find_job_extensions,
  correlator_noise_events,
  correlator_evicted_jobs,
  correlator_budget_evicted_jobs,
  correlator_late_unknown_returns,
  correlator_tracked_jobs,
  correlator_settled_jobs,
  correlator_jobs_bytes,
  correlator_memory_budget_bytes,
  correlator_known_minions,
  correlator_checkpoint_writes,
  correlator_checkpoint_write_failures,
  correlator_checkpoint_restored_jobs,
  correlator_checkpoint_restore_errors,
  correlator_checkpoint_bytes,
  correlator_checkpoint_last_write_duration_seconds,
  correlator_checkpoint_last_write_timestamp_seconds,
  // alerting
  alerting_alerts,
  alerting_deliveries,
  alerting_delivery_retries,
  alerting_dropped_alerts,
  alerting_dedupe,
  // fleet
  fleet_minions,
  fleet_episodes,
  fleet_blind,
  fleet_last_sweep_timestamp_seconds,
  fleet_state_errors,
  fleet_highstate_minions,
  // minion: the opt-in per-minion gauges (fleet.minion_metrics), one series per minion, capped
  minion_last_heard_timestamp_seconds,
  minion_last_highstate_success_timestamp_seconds,
  minion_last_highstate_failed_states,
  minion_metrics_truncated,
  minion_metrics_minions,
  // indexer: documents
  indexer_documents_built,
  indexer_documents_skipped,
  indexer_truncated_returns,
  indexer_redactions,
  // spool
  spool_size_bytes,
  spool_segments,
  spool_pending_documents,
  spool_appended_documents,
  spool_appended_bytes,
  spool_acked_documents,
  spool_fsyncs,
  spool_full,
  spool_dropped_documents,
  spool_backpressure_waits,
  spool_backpressure_timeouts,
  spool_io_errors,
  spool_corrupt_records,
  spool_torn_tails,
  // spool: the backfill lane (run's documents from the job cache), the same figures
  spool_backfill_size_bytes,
  spool_backfill_segments,
  spool_backfill_pending_documents,
  spool_backfill_appended_documents,
  spool_backfill_appended_bytes,
  spool_backfill_acked_documents,
  spool_backfill_fsyncs,
  spool_backfill_full,
  spool_backfill_dropped_documents,
  spool_backfill_backpressure_waits,
  spool_backfill_backpressure_timeouts,
  spool_backfill_io_errors,
  spool_backfill_corrupt_records,
  spool_backfill_torn_tails,
  // indexer: shipping
  indexer_bulk_requests,
  indexer_bulk_request_failures,
  indexer_bulk_request_bytes,
  indexer_bulk_request_duration_seconds,
  indexer_bulk_request_last_duration_seconds,
  indexer_documents_shipped,
  indexer_document_conflicts,
  indexer_document_retries,
  indexer_documents_dead_lettered,
  indexer_dead_letter_file_errors,
  indexer_in_flight_batches,
  indexer_engine_reachable,
  indexer_setup_done,
  indexer_setup_failures,
  // indexer: the engine cluster as salttap sees it
  indexer_hosts_configured,
  indexer_hosts_up,
  indexer_host_up,
  indexer_host_requests,
  indexer_cluster_status,
  indexer_cluster_nodes,
  // reconcile (run: the job cache read for what the live bus missed)
  reconcile_passes,
  reconcile_jobs,
  reconcile_running,
  reconcile_errors,
  // ui (the job browser: `ui`, and `run` under /ui/)
  ui_requests,
  ui_api_request_duration_seconds,
  // the HTTP listener (/metrics, /healthz, /ui/)
  listener_connections,
  listener_max_connections,
  listener_refused,
  listener_timeouts,
};
inline constexpr std::size_t kMetricCount = static_cast<std::size_t>(MetricId::listener_timeouts) + 1;

struct MetricLabel {
  std::string_view name;
  std::span<const std::string_view> values;  // every value it may take
  // The one value is fixed by the build (the version): the documentation
  // names it `<name>` rather than listing it.
  bool from_build = false;
  // Any value, from outside (a minion's id): no list to check it against, so
  // only Metrics::samples publishes such a family, its lines rendered and
  // bounded by the publisher (fleet/minion_metrics.h). Documented as `<name>`.
  bool open = false;
};

struct MetricSpec {
  MetricId id;
  std::string_view name;
  MetricType type;
  std::span<const MetricLabel> labels;  // in the order a publisher gives their values
  std::string_view help;
  std::span<const double> buckets = {};  // histograms: the upper bounds, ascending (+Inf implied)
};

std::span<const MetricSpec> metric_catalog();
const MetricSpec& metric_spec(MetricId id);

}  // namespace salttap
