#pragma once
// Reconcile: while `run` taps the bus live, it also indexes what the
// master's job cache holds that the index may lack (docs/backfill.md,
// "Reconcile in run"): on its first start the cache's whole history, after
// a stop or a crash the jobs of the gap, after a lost connection to the bus
// or dropped events the jobs of that gap.
//
// Coverage is kept in the ReconcileStateFile: until when the bus was tapped
// live without a gap, and when the oldest job then open began. A pass reads
// the cache from there (less an overlap) with a JobCacheSource and decides,
// job by job, on the pipeline thread between live batches:
//
//   known     the live correlator holds the job (it saw its `new`, or took
//             it back from the checkpoint), or the last run's record says
//             that run settled it: skipped, but for the cached returns of
//             minions the live job has not seen answer (they came while
//             salttap was down, or sat in the tap's queue when it died):
//             those go to the live correlator, in time while the job is
//             open, late once it settled with them missing
//   followed  its late_grace has not passed (or live returns opened it as an
//             orphan): its cached events go to the live correlator, which
//             adopts an orphan, settles the job and takes later returns as
//             they come, exactly as if it had seen the job begin
//   indexed   older: the cache's verdict, through CacheIndexer, with external
//             versions below every live one (nothing live is overwritten)
//
// Live events keep priority: a pass advances only between live batches, a
// few jobs at a time (more when the bus is quiet). The documents of indexed
// jobs go to the spool's backfill lane, which the shipper sends only when no
// live document waits (indexer/spool_lanes.h); a pass waits while that lane
// holds more than `max_spool_pending` documents. Followed jobs are the live
// correlator's, so their documents go to the live lane, ahead of live jobs
// still to come: a pass also waits while the live lane holds more than
// kLivePendingShare of `max_spool_pending`.

#include <absl/container/flat_hash_set.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/steady_time.h"
#include "config/config.h"
#include "correlator/job.h"
#include "jobcache/cache_filesystem.h"
#include "jobcache/job_cache_location.h"
#include "jobcache/job_cache_source.h"
#include "pipeline/document_pipeline.h"
#include "recovery/cache_indexer.h"
#include "recovery/reconcile_state.h"

namespace salttap::recovery {

// What waits in the spool: in the live lane, documents not yet handed to
// the shipper (those a live document would queue behind); in the backfill
// lane, documents not yet acknowledged.
struct SpoolPending {
  std::uint64_t live = 0, backfill = 0;
};

// A pass reads on only while at most max_spool_pending / kLivePendingShare
// documents (200 by default) wait in the live lane: a live job settling
// meanwhile waits behind that many at most, a fraction of one bulk request.
// Documents already in flight do not count, so a busy but keeping-up live
// bus does not hold a pass back.
inline constexpr std::uint64_t kLivePendingShare = 10;

struct ReconcileCounts {
  std::uint64_t passes = 0;          // passes begun
  std::uint64_t passes_failed = 0;   // the cache could not be read (logged)
  std::uint64_t jobs_known = 0;      // the live correlator had them
  std::uint64_t jobs_followed = 0;   // fed to the live correlator
  std::uint64_t returns_passed = 0;  // cached returns handed to jobs the live correlator held
  std::uint64_t state_write_errors = 0;
};

class Reconciler {
 public:
  // `live`: `run`'s pipeline (its correlator takes followed jobs); `sink`
  // takes the documents of indexed jobs (`run`: the backfill lane);
  // `spool_pending` says how many documents wait in each lane.
  Reconciler(const config::Config& config, jobcache::JobCacheLocation cache, ReconcileStateFile& state,
             pipeline::DocumentPipeline& live, pipeline::DocumentSink& sink,
             std::function<SpoolPending()> spool_pending, const Clock& clock,
             jobcache::CacheFilesystem& fs = jobcache::posix_cache_filesystem(), SteadyTime& time = real_steady_time());
  ~Reconciler();

  // Before the first live event: reads the state file and plans the first
  // pass.
  void start();
  // After each live batch: `connected` to the bus, `dropped` events so far
  // (the tap's queue). Records coverage, plans a pass for a gap, writes the
  // state file every `state_interval`, and reads a few jobs of a pass in
  // progress (more when `quiet`: no live event waited). True while a pass
  // has work left that it could do now (the feed then does not wait).
  bool tick(bool connected, std::uint64_t dropped, bool quiet);
  // At shutdown: the state file, with coverage until now.
  void stop();
  // A config reload: the correlator's settings (which jobs are recent
  // enough to follow, noise_funs), audit, redaction and document filters of
  // `next` apply to the jobs read from now on, in the pass in progress too.
  // reconcile: itself is not reloaded (daemon/internal/config_reload.h).
  void reconfigure(const config::Config& next);

  const ReconcileCounts& counts() const { return counts_; }
  // Of the passes so far (indexed, still running, filtered, failed...).
  const BackfillCounts& backfill_counts() const { return done_; }
  const jobcache::JobCacheStats& cache_stats() const { return cache_done_; }
  bool pass_running() const { return pass_ != nullptr; }

 private:
  struct Pass;
  void plan(std::optional<Micros> since);  // nullopt: the whole cache
  void begin_pass();
  void end_pass();
  bool claim(jobcache::JobRead& read);
  void follow(jobcache::JobRead& read);
  void pass_returns(jobcache::JobRead& read, const correlator::Job& live);
  // The job's events, read whole; false when it went back to the source
  // (caught mid-write) or was skipped.
  bool read_whole(jobcache::JobRead& read, std::vector<tap::Event>& events);
  void write_state();

  config::Config config_;
  config::ReconcileConfig rc_;
  jobcache::JobCacheLocation cache_;
  ReconcileStateFile& state_;
  pipeline::DocumentPipeline& live_;
  pipeline::DocumentSink& sink_;
  std::function<SpoolPending()> spool_pending_;
  const Clock& clock_;
  jobcache::CacheFilesystem& fs_;
  SteadyTime& time_;

  // The last run's record, for the first pass: jobs that began before
  // `record_settled_before_` and are not in `record_open_` were settled by
  // that run (its documents are in the spool or the engine).
  std::optional<Micros> record_settled_before_;
  absl::flat_hash_set<std::string> record_open_;

  std::unique_ptr<Pass> pass_;
  bool planned_ = false;
  std::optional<Micros> planned_since_;  // of the next pass; nullopt with planned_: everything
  Micros covered_until_ = 0;             // the bus was live without a gap until here
  std::optional<Micros> gap_since_;      // a gap (disconnected, dropped events) began after this
  std::uint64_t dropped_ = 0;
  SteadyTime::time_point next_state_write_{};
  ReconcileCounts counts_;
  BackfillCounts done_;
  jobcache::JobCacheStats cache_done_;
};

// salttap_reconcile_* (common/metric_catalog.h).
void publish_reconcile_metrics(Metrics& metrics, const ReconcileCounts& counts, const BackfillCounts& backfill,
                               const jobcache::JobCacheStats& cache, bool running);

}  // namespace salttap::recovery
