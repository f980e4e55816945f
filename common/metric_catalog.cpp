#include "common/metric_catalog.h"

#include <stdexcept>

namespace salttap {
namespace {

using enum MetricType;

// Label values. They mirror the to_string() of the enums the publishers
// iterate (DocClass, DropReason, RequestFailure, AlertKind...); Metrics
// refuses any other value, so a new enumerator must be added here too.
constexpr std::string_view kFrameSkipReasons[] = {"undecodable", "oversize", "invalid", "truncated"};
constexpr std::string_view kEventDropReasons[] = {"queue_full"};
constexpr std::string_view kAlertKinds[] = {"failed", "missing", "risky", "spool_full"};
constexpr std::string_view kOutlets[] = {"webhook", "fire"};
constexpr std::string_view kAlertDropReasons[] = {"queue_full", "gave_up"};
constexpr std::string_view kDocClasses[] = {"job", "return", "state", "event", "alert"};
constexpr std::string_view kDocSkipReasons[] = {"function_filter", "event_tag_filter"};
constexpr std::string_view kSpoolDropReasons[] = {"full", "too_large", "io_error", "stopped_while_full"};
constexpr std::string_view kCorruptFound[] = {"recovery", "read"};
constexpr std::string_view kRequestFailures[] = {"transport", "http_429", "http_5xx",   "http_413",
                                                 "http_auth", "http_4xx", "http_other", "bad_response"};
constexpr std::string_view kCheckpointErrors[] = {"unreadable",      "truncated", "bad_magic",
                                                  "unknown_version", "bad_crc",   "invalid"};
constexpr std::string_view kDeadLetterDestinations[] = {"index", "file"};

constexpr MetricLabel kFrameSkipLabels[] = {{"reason", kFrameSkipReasons}};
constexpr MetricLabel kEventDropLabels[] = {{"reason", kEventDropReasons}};
constexpr MetricLabel kAlertKindLabels[] = {{"kind", kAlertKinds}};
constexpr MetricLabel kOutletLabels[] = {{"outlet", kOutlets}};
constexpr MetricLabel kAlertDropLabels[] = {{"outlet", kOutlets}, {"reason", kAlertDropReasons}};
constexpr MetricLabel kClassLabels[] = {{"class", kDocClasses}};
constexpr MetricLabel kDocSkipLabels[] = {{"reason", kDocSkipReasons}};
constexpr MetricLabel kSpoolDropLabels[] = {{"class", kDocClasses}, {"reason", kSpoolDropReasons}};
constexpr MetricLabel kCorruptLabels[] = {{"found", kCorruptFound}};
constexpr MetricLabel kRequestFailureLabels[] = {{"reason", kRequestFailures}};
constexpr MetricLabel kCheckpointErrorLabels[] = {{"reason", kCheckpointErrors}};
constexpr MetricLabel kDeadLetterLabels[] = {{"destination", kDeadLetterDestinations}};

using M = MetricId;
constexpr MetricSpec kCatalog[] = {
    {M::tap_read_bytes, "salttap_tap_read_bytes_total", counter, {}, "Bytes read from the master's event bus"},
    {M::tap_frames, "salttap_tap_frames_total", counter, {}, "Frames read"},
    {M::tap_events, "salttap_tap_events_total", counter, {}, "Events decoded"},
    {M::tap_skipped_frames, "salttap_tap_skipped_frames_total", counter, kFrameSkipLabels, "Frames skipped, by reason"},
    {M::tap_skipped_bytes, "salttap_tap_skipped_bytes_total", counter, {}, "Bytes not delivered in any frame"},
    {M::tap_resyncs, "salttap_tap_resyncs_total", counter, {}, "Times the stream was re-found after bad bytes"},
    {M::tap_dropped_events, "salttap_tap_dropped_events_total", counter, kEventDropLabels,
     "Events dropped because the consumer was too slow"},
    {M::tap_connects, "salttap_tap_connects_total", counter, {}, "Connections made to the bus"},
    {M::tap_disconnects, "salttap_tap_disconnects_total", counter, {}, "Connections lost"},
    {M::tap_connect_failures, "salttap_tap_connect_failures_total", counter, {}, "Failed connection attempts"},
    {M::tap_connected, "salttap_tap_connected", gauge, {}, "1 while connected to the bus"},
    {M::tap_queue_events, "salttap_tap_queue_events", gauge, {}, "Events waiting in the tap's queue"},
    {M::tap_queue_bytes, "salttap_tap_queue_bytes", gauge, {}, "Wire bytes of the events waiting in the tap's queue"},

    {M::correlator_events, "salttap_correlator_events_total", counter, {}, "Events seen by the correlator"},
    {M::correlator_jobs_opened, "salttap_correlator_jobs_opened_total", counter, {}, "Jobs opened (all kinds)"},
    {M::correlator_jobs_settled, "salttap_correlator_jobs_settled_total", counter, {}, "Jobs settled"},
    {M::correlator_returns, "salttap_correlator_returns_total", counter, {}, "Minion returns"},
    {M::correlator_late_returns,
     "salttap_correlator_late_returns_total",
     counter,
     {},
     "Minion returns after the job's deadline"},
    {M::correlator_duplicate_returns,
     "salttap_correlator_duplicate_returns_total",
     counter,
     {},
     "Minion returns repeated for the same job (the first one counts)"},
    {M::correlator_unexpected_returns,
     "salttap_correlator_unexpected_returns_total",
     counter,
     {},
     "Minion returns from a minion the job did not expect"},
    {M::correlator_missing_minions,
     "salttap_correlator_missing_minions_total",
     counter,
     {},
     "Minions that missed a job's deadline"},
    {M::correlator_find_job_extensions,
     "salttap_correlator_find_job_extensions_total",
     counter,
     {},
     "Deadlines extended by saltutil.find_job answers"},
    {M::correlator_noise_events,
     "salttap_correlator_noise_events_total",
     counter,
     {},
     "find_job / saltutil.running traffic"},
    {M::correlator_evicted_jobs,
     "salttap_correlator_evicted_jobs_total",
     counter,
     {},
     "Jobs evicted early: over max_jobs"},
    {M::correlator_tracked_jobs, "salttap_correlator_tracked_jobs", gauge, {}, "Jobs held in memory"},
    {M::correlator_known_minions, "salttap_correlator_known_minions", gauge, {}, "Minion ids known"},
    {M::correlator_checkpoint_writes,
     "salttap_correlator_checkpoint_writes_total",
     counter,
     {},
     "Checkpoints of the open jobs written"},
    {M::correlator_checkpoint_write_failures,
     "salttap_correlator_checkpoint_write_failures_total",
     counter,
     {},
     "Checkpoint writes that failed (the previous checkpoint stays)"},
    {M::correlator_checkpoint_restored_jobs,
     "salttap_correlator_checkpoint_restored_jobs_total",
     counter,
     {},
     "Jobs taken back from the checkpoint at start"},
    {M::correlator_checkpoint_restore_errors, "salttap_correlator_checkpoint_restore_errors_total", counter,
     kCheckpointErrorLabels, "Checkpoints ignored at start, by reason (moved aside to <path>.bad)"},
    {M::correlator_checkpoint_bytes, "salttap_correlator_checkpoint_bytes", gauge, {}, "Size of the last checkpoint"},
    {M::correlator_checkpoint_last_write_duration_seconds,
     "salttap_correlator_checkpoint_last_write_duration_seconds",
     gauge,
     {},
     "How long the last checkpoint took to encode and write"},
    {M::correlator_checkpoint_last_write_timestamp_seconds,
     "salttap_correlator_checkpoint_last_write_timestamp_seconds",
     gauge,
     {},
     "When the last checkpoint was written (Unix time; 0: not yet)"},

    {M::alerting_alerts, "salttap_alerting_alerts_total", counter, kAlertKindLabels, "Alerts raised, by kind"},
    {M::alerting_deliveries, "salttap_alerting_deliveries_total", counter, kOutletLabels,
     "Alerts delivered, by outlet"},
    {M::alerting_delivery_retries, "salttap_alerting_delivery_retries_total", counter, kOutletLabels,
     "Delivery retries, by outlet"},
    {M::alerting_dropped_alerts, "salttap_alerting_dropped_alerts_total", counter, kAlertDropLabels,
     "Alerts not delivered (queue full or gave up), by outlet"},

    {M::indexer_documents_built, "salttap_indexer_documents_built_total", counter, kClassLabels,
     "Documents built for the indexer"},
    {M::indexer_documents_skipped, "salttap_indexer_documents_skipped_total", counter, kDocSkipLabels,
     "Documents not built, by reason (functions_blacklist / whitelist, events include / exclude)"},
    {M::indexer_truncated_returns,
     "salttap_indexer_truncated_returns_total",
     counter,
     {},
     "Returns whose return_text was cut at text_cap_bytes (the raw return is whole)"},
    {M::indexer_redactions,
     "salttap_indexer_redactions_total",
     counter,
     {},
     "Secrets replaced in returns and event data"},

    {M::spool_size_bytes, "salttap_spool_size_bytes", gauge, {}, "Bytes of spool segments on disk"},
    {M::spool_segments, "salttap_spool_segments", gauge, {}, "Spool segment files"},
    {M::spool_pending_documents,
     "salttap_spool_pending_documents",
     gauge,
     {},
     "Documents spooled and not yet acknowledged by the engine"},
    {M::spool_appended_documents,
     "salttap_spool_appended_documents_total",
     counter,
     {},
     "Documents written to the spool"},
    {M::spool_appended_bytes, "salttap_spool_appended_bytes_total", counter, {}, "Bytes written to the spool"},
    {M::spool_acked_documents,
     "salttap_spool_acked_documents_total",
     counter,
     {},
     "Documents acknowledged and released"},
    {M::spool_fsyncs, "salttap_spool_fsyncs_total", counter, {}, "fsync calls on spool segments"},
    {M::spool_full, "salttap_spool_full", gauge, {}, "1 while the full-spool policy refuses a class of documents"},
    {M::spool_dropped_documents, "salttap_spool_dropped_documents_total", counter, kSpoolDropLabels,
     "Documents the spool could not take, by class and reason (full: the full-spool policy)"},
    {M::spool_backpressure_waits,
     "salttap_spool_backpressure_waits_total",
     counter,
     {},
     "Times the pipeline waited for spool room (the tap queue drops meanwhile)"},
    {M::spool_backpressure_timeouts, "salttap_spool_backpressure_timeouts_total", counter, kClassLabels,
     "Waits for spool room that timed out (the document is offered again)"},
    {M::spool_io_errors,
     "salttap_spool_io_errors_total",
     counter,
     {},
     "Failed file operations on the spool, each logged at ERROR"},
    {M::spool_corrupt_records, "salttap_spool_corrupt_records_total", counter, kCorruptLabels,
     "Spooled records skipped for a bad checksum or header: their documents are lost"},
    {M::spool_torn_tails,
     "salttap_spool_torn_tails_total",
     counter,
     {},
     "Segments cut back to their last whole record at start (a write interrupted by a crash)"},

    {M::indexer_bulk_requests, "salttap_indexer_bulk_requests_total", counter, {}, "Bulk requests sent"},
    {M::indexer_bulk_request_failures, "salttap_indexer_bulk_request_failures_total", counter, kRequestFailureLabels,
     "Bulk requests that failed as a whole (retried), by reason"},
    {M::indexer_bulk_request_bytes,
     "salttap_indexer_bulk_request_bytes_total",
     counter,
     {},
     "Bulk request bytes sent (after gzip)"},
    {M::indexer_bulk_request_duration_seconds,
     "salttap_indexer_bulk_request_duration_seconds",
     summary,
     {},
     "Time in bulk requests"},
    {M::indexer_bulk_request_last_duration_seconds,
     "salttap_indexer_bulk_request_last_duration_seconds",
     gauge,
     {},
     "Duration of the last bulk request"},
    {M::indexer_documents_shipped,
     "salttap_indexer_documents_shipped_total",
     counter,
     {},
     "Documents the engine acknowledged (2xx or 409)"},
    {M::indexer_document_conflicts,
     "salttap_indexer_document_conflicts_total",
     counter,
     {},
     "Of the shipped documents, those answered 409 (already there)"},
    {M::indexer_document_retries,
     "salttap_indexer_document_retries_total",
     counter,
     {},
     "Document retries (429, 5xx, no response)"},
    {M::indexer_documents_dead_lettered, "salttap_indexer_documents_dead_lettered_total", counter, kDeadLetterLabels,
     "Documents the engine rejected, stored in the dead-letter index, or in the spool's dead/ folder when that "
     "index refused them too"},
    {M::indexer_dead_letter_file_errors,
     "salttap_indexer_dead_letter_file_errors_total",
     counter,
     {},
     "Failed writes to the dead-letter file (the document is kept and retried)"},
    {M::indexer_in_flight_batches, "salttap_indexer_in_flight_batches", gauge, {}, "Batches being shipped"},
    {M::indexer_engine_reachable,
     "salttap_indexer_engine_reachable",
     gauge,
     {},
     "1 when the last request got an answer"},
    {M::indexer_setup_done,
     "salttap_indexer_setup_done",
     gauge,
     {},
     "1 once templates are installed and shipping started"},
    {M::indexer_setup_failures, "salttap_indexer_setup_failures_total", counter, {}, "Failed index setup attempts"},
};

// The table is indexed by MetricId: one row per id, in enum order.
constexpr bool ordered_by_id() {
  for (std::size_t i = 0; i < std::size(kCatalog); ++i)
    if (static_cast<std::size_t>(kCatalog[i].id) != i) return false;
  return std::size(kCatalog) == kMetricCount;
}
static_assert(ordered_by_id(), "kCatalog must hold every MetricId once, in enum order");

}  // namespace

std::string_view to_string(MetricType type) {
  switch (type) {
    case counter:
      return "counter";
    case gauge:
      return "gauge";
    case summary:
      return "summary";
  }
  throw std::invalid_argument("unknown MetricType");
}

std::span<const MetricSpec> metric_catalog() { return kCatalog; }

const MetricSpec& metric_spec(MetricId id) { return kCatalog[static_cast<std::size_t>(id)]; }

}  // namespace salttap
