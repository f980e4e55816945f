#pragma once
// CacheIndexer: the master's job cache through the live path (docs/backfill.md).
//
// Each job the JobCacheSource reads goes, event by event, through a
// correlator and document builder of its own (a DocumentPipeline, dropped
// when the job is done: memory does not grow with the cache) on a clock that
// stands at each event's time, so the job gets the very verdicts and the
// very documents the live stream would have given it. Its documents go to a
// DocumentSink (the spool), its returns as they come and its job document
// once, at the end: the last one the builder made. Raw event documents are
// not made (these events were never on the bus). Job documents take their
// external versions from the jid's time (indexer::JobVersionClock::jid), so
// whatever the live stream wrote about a job wins.
//
// A job settles as on the bus: when every expected minion returned, or once
// its deadline, counted from the jid's time, has passed by `now`: the
// minions still silent are then missing (a minion return job: once
// orphan_settle has passed since its return). A job still inside its
// deadline is indexed as it stands (running) and counted.
//
// It runs in steps, step(n) reading at most n jobs, so a caller can
// interleave it with live events and serve those first.

#include <array>
#include <cstdint>
#include <functional>

#include "common/clock.h"
#include "config/config.h"
#include "indexer/document.h"
#include "jobcache/job_cache_source.h"
#include "pipeline/event_loop.h"

namespace salttap::recovery {

struct BackfillCounts {
  std::uint64_t jobs_indexed = 0;   // their documents went to the sink
  std::uint64_t jobs_running = 0;   // of those, still inside their deadline: indexed as they stand
  std::uint64_t jobs_filtered = 0;  // read, but no document (functions_blacklist / functions_whitelist)
  std::uint64_t jobs_failed = 0;    // a return file failed mid-job: read again later (or counted undecodable)
  std::uint64_t events = 0;         // cache-made events through the correlator
  std::uint64_t documents = 0;      // handed to the sink
  std::array<std::uint64_t, indexer::kDocClasses> documents_by_class{};
  std::uint64_t ignored_out_files = 0;  // out.p files that did not read: their returns went without `out`
};

class CacheIndexer {
 public:
  // `config` as for `run` (master id resolved by the caller, or the host
  // name's); `now`: the wall clock deciding which deadlines have passed;
  // `give_up` is asked while the sink waits for room.
  CacheIndexer(
      const config::Config& config, jobcache::JobCacheSource& source, pipeline::DocumentSink& sink, const Clock& now,
      std::function<bool()> give_up = [] { return false; });

  // Asked for each job read whole before it is indexed: true takes it away
  // (`run`'s reconcile follows recent jobs live, recovery/reconciler.h).
  void set_claim(std::function<bool(jobcache::JobRead&)> claim) { claim_ = std::move(claim); }

  // A config reload (`run`'s reconcile): the jobs read from now on are
  // indexed with `config`.
  void reconfigure(const config::Config& config);

  // Reads and indexes at most `max_jobs` more jobs; false once the cache is
  // exhausted (retries included).
  [[nodiscard]] bool step(std::size_t max_jobs);

  const BackfillCounts& counts() const { return counts_; }
  const jobcache::JobCacheStats& cache_stats() const { return source_.stats(); }

 private:
  void handle(jobcache::JobRead&& read);
  void index(jobcache::JobRead&& read);
  void report(const jobcache::JobRead& read);

  config::Config config_;
  jobcache::JobCacheSource& source_;
  pipeline::DocumentSink& sink_;
  const Clock& now_;
  std::function<bool()> give_up_;
  std::function<bool(jobcache::JobRead&)> claim_;
  BackfillCounts counts_;
  std::array<std::uint64_t, jobcache::kJobOutcomes> logged_{};  // bad jobs logged so far, by outcome
  std::size_t batch_docs_ = 512;
};

}  // namespace salttap::recovery
