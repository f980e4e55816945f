#include "recovery/reconciler.h"

#include <algorithm>
#include <vector>

#include <absl/container/flat_hash_set.h>

#include "common/log.h"
#include "correlator/job.h"
#include "tap/tag.h"

namespace salttap::recovery {
namespace {

// The minions whose return the live job has taken (succeeded or failed):
// pending, missing and unknown ones may still get one from the cache.
absl::flat_hash_set<std::string_view> answered(const correlator::Correlator& c, const correlator::Job& job) {
  absl::flat_hash_set<std::string_view> out;
  job.for_each_minion(
      [](std::uint8_t f) {
        const std::uint8_t o = f & correlator::kOutcomeMask;
        return o == correlator::kSucceeded || o == correlator::kFailed;
      },
      [&](correlator::MinionId m) { out.insert(c.minions().name(m)); });
  return out;
}

}  // namespace

// One pass over the cache: its source and the backfill that reads it.
struct Reconciler::Pass {
  std::unique_ptr<jobcache::JobCacheSource> source;
  std::unique_ptr<CacheIndexer> job;
  std::optional<Micros> since;
  ReconcileCounts before;  // the counts when it began: what it did is the difference
};

Reconciler::Reconciler(const config::Config& config, jobcache::JobCacheLocation cache, ReconcileStateFile& state,
                       pipeline::DocumentPipeline& live, pipeline::DocumentSink& sink,
                       std::function<SpoolPending()> spool_pending, const Clock& clock, jobcache::CacheFilesystem& fs,
                       SteadyTime& time)
    : config_(config),
      rc_(config.reconcile),
      cache_(std::move(cache)),
      state_(state),
      live_(live),
      sink_(sink),
      spool_pending_(std::move(spool_pending)),
      clock_(clock),
      fs_(fs),
      time_(time) {}

Reconciler::~Reconciler() = default;

void Reconciler::start() {
  const Micros now = clock_.now();
  covered_until_ = now;
  next_state_write_ = time_.now() + std::chrono::microseconds(rc_.state_interval);
  ReconcileState saved;
  std::string error;
  switch (state_.read(saved, error)) {
    case ReconcileStateFile::Read::absent:
      log::info("reconcile: no record of an earlier run ({}): indexing the whole job cache in {}",
                state_.path().string(), cache_.jobs_dir.string());
      plan(std::nullopt);
      break;
    case ReconcileStateFile::Read::bad:
      log::warn("reconcile: {}; indexing the whole job cache in {} (what is indexed already is kept)", error,
                cache_.jobs_dir.string());
      plan(std::nullopt);
      break;
    case ReconcileStateFile::Read::found: {
      // From the oldest job open at the record, or taken back from the
      // checkpoint (written at another moment: a job it holds open may have
      // settled before the record, and its returns are to be read). Less the
      // overlap for these too: the cache places a job at its jid's time, a
      // little before the `_stamp` of its `new`, which the correlator keeps.
      Micros from = std::min(saved.live_until, saved.open_since.value_or(saved.live_until));
      live_.correlator().for_each_open([&](const correlator::Job& job) { from = std::min(from, job.started_at); });
      from -= rc_.overlap;
      if (!saved.open_truncated) {
        record_settled_before_ = saved.live_until - rc_.overlap;
        record_open_.insert(saved.open.begin(), saved.open.end());
      }
      log::info("reconcile: the bus was tapped until {} (oldest open job from {}): indexing the job cache from {}",
                format_utc(saved.live_until), saved.open_since ? format_utc(*saved.open_since) : "-", format_utc(from));
      plan(from);
      break;
    }
  }
}

void Reconciler::reconfigure(const config::Config& next) {
  config_ = next;
  if (pass_) pass_->job->reconfigure(next);
}

void Reconciler::plan(std::optional<Micros> since) {
  if (!planned_)
    planned_since_ = since;
  else if (planned_since_ && since)
    planned_since_ = std::min(*planned_since_, *since);
  else
    planned_since_.reset();  // one of them reads everything
  planned_ = true;
}

void Reconciler::begin_pass() {
  const std::optional<Micros> since = planned_since_;
  planned_ = false;
  planned_since_.reset();
  ++counts_.passes;
  jobcache::JobReaderOptions reader{{since, std::nullopt}, config_.correlator.noise_funs, {}, cache_.hash_type};
  auto pass = std::make_unique<Pass>();
  pass->source = std::make_unique<jobcache::JobCacheSource>(cache_.jobs_dir, std::move(reader), jobcache::RetryPolicy{},
                                                            fs_, time_);
  if (const auto opened = pass->source->open(); !opened) {
    ++counts_.passes_failed;
    log::error("reconcile: cannot read the job cache: {}", opened.error().message);
    return;
  }
  pass->since = since;
  pass->before = counts_;
  pass->job = std::make_unique<CacheIndexer>(config_, *pass->source, sink_, clock_);
  pass->job->set_claim([this](jobcache::JobRead& read) { return claim(read); });
  log::info("reconcile: reading {} job directories of {}{}", pass->source->stats().job_dirs, cache_.jobs_dir.string(),
            since ? " from " + format_utc(*since) : std::string(" (every job)"));
  pass_ = std::move(pass);
}

void Reconciler::end_pass() {
  // The last run's record served its pass; later passes cover this run's gaps.
  record_settled_before_.reset();
  record_open_.clear();
  const BackfillCounts& n = pass_->job->counts();
  const jobcache::JobCacheStats& c = pass_->source->stats();
  log::info(
      "reconcile: pass done: {} jobs read of {} directories: {} indexed from the cache ({} still running), {} "
      "followed live, {} known live ({} of their returns read from the cache); {} outside the window; not read: {} "
      "incomplete, {} undecodable, {} unreadable",
      c.read, c.job_dirs, n.jobs_indexed, n.jobs_running, counts_.jobs_followed - pass_->before.jobs_followed,
      counts_.jobs_known - pass_->before.jobs_known, counts_.returns_passed - pass_->before.returns_passed,
      c.count(jobcache::JobOutcome::outside_window), c.count(jobcache::JobOutcome::incomplete),
      c.count(jobcache::JobOutcome::undecodable), c.count(jobcache::JobOutcome::unreadable));
  done_.jobs_indexed += n.jobs_indexed;
  done_.jobs_running += n.jobs_running;
  done_.jobs_filtered += n.jobs_filtered;
  done_.jobs_failed += n.jobs_failed;
  done_.events += n.events;
  done_.documents += n.documents;
  cache_done_.read += c.read;
  for (std::size_t i = 0; i < c.outcomes.size(); ++i) cache_done_.outcomes[i] += c.outcomes[i];
  pass_.reset();
}

bool Reconciler::claim(jobcache::JobRead& read) {
  const jobcache::CachedJob& job = *read.job;
  const std::optional<correlator::Job> live = live_.correlator().find(job.jid());
  if (live && live->kind != correlator::JobKind::orphan && live->kind != correlator::JobKind::scheduled) {
    ++counts_.jobs_known;
    if (job.shape() == jobcache::JobShape::publish) pass_returns(read, *live);
    return true;
  }
  if (!live && record_settled_before_ && job.started_at() < *record_settled_before_ &&
      !record_open_.contains(job.jid())) {
    ++counts_.jobs_known;  // the last run settled it
    return true;
  }
  // A job whose late returns could still come is the live correlator's:
  // indexed from the cache, a later return would make a live orphan of it.
  const correlator::CorrelatorConfig& cc = config_.correlator;
  const Micros open_until = job.started_at() + cc.deadline_for(job.fun()) + cc.late_grace;
  if (!live && open_until <= clock_.now()) return false;  // the cache's verdict
  follow(read);
  return true;
}

bool Reconciler::read_whole(jobcache::JobRead& read, std::vector<tap::Event>& events) {
  // Read whole first: a job caught mid-write goes back to the source, and
  // the live correlator never sees half of it.
  jobcache::CachedJob& job = *read.job;
  std::string error;
  while (true) {
    tap::Event event;
    const auto next = job.next_event(event, error);
    if (next == jobcache::CachedJob::Next::end) return true;
    if (next == jobcache::CachedJob::Next::failed) {
      const std::string jid = job.jid();
      const bool again = pass_->source->retry_later(std::move(read));
      log::warn("reconcile: job {}: {}; {}", jid, error, again ? "reading it again later" : "skipped");
      return false;
    }
    events.push_back(std::move(event));
  }
}

void Reconciler::follow(jobcache::JobRead& read) {
  std::vector<tap::Event> events;
  if (!read_whole(read, events)) return;
  for (const tap::Event& e : events) live_.correlator().on_event(e);
  ++counts_.jobs_followed;
}

// A job the live correlator holds may still lack returns the cache has: it
// was taken back from the checkpoint of a salttap that died (or stopped)
// while they came, or their events were lost in a gap. Those returns go to
// the live job as if the bus had brought them now: in time while it is open,
// late (replacing `missing`) once it settled without them, so its last
// document carries the real verdict. Returns it took live are not read.
void Reconciler::pass_returns(jobcache::JobRead& read, const correlator::Job& live) {
  const jobcache::CachedJob& job = *read.job;
  const correlator::Correlator& c = live_.correlator();
  const auto seen = answered(c, live);
  const bool lacking = std::any_of(job.returns().begin(), job.returns().end(),
                                   [&](const jobcache::CachedReturn& r) { return !seen.contains(r.minion); });
  if (!lacking) return;
  std::vector<tap::Event> events;
  if (!read_whole(read, events)) return;
  // `seen` views names in the minion registry, which a return of a new
  // minion grows: every return is picked before the first is handed over.
  std::vector<const tap::Event*> missed;
  for (const tap::Event& e : events) {
    const std::string_view tag = e.tag();
    if (tap::tag_part(tag, 3) == "ret" && !seen.contains(tap::tag_part(tag, 4))) missed.push_back(&e);
  }
  for (const tap::Event* e : missed) live_.correlator().on_event(*e);
  counts_.returns_passed += missed.size();
}

bool Reconciler::tick(bool connected, std::uint64_t dropped, bool quiet) {
  const Micros now = clock_.now();
  const bool dropped_more = dropped > dropped_;
  dropped_ = dropped;
  if (!connected || dropped_more) {
    if (!gap_since_) {
      gap_since_ = covered_until_;
      log::warn("reconcile: {} since {}: the job cache will be read for that gap",
                connected ? "the tap dropped events" : "not connected to the bus", format_utc(covered_until_));
    }
  } else {
    if (gap_since_) {
      plan(*gap_since_ - rc_.overlap);
      gap_since_.reset();
    }
    covered_until_ = now;
  }
  if (time_.now() >= next_state_write_) {
    write_state();
    next_state_write_ = time_.now() + std::chrono::microseconds(rc_.state_interval);
  }

  if (!pass_ && planned_) begin_pass();
  if (!pass_) return false;
  // Live documents first: the backfill lane bounded, the live lane nearly empty.
  const SpoolPending pending = spool_pending_();
  if (pending.backfill > rc_.max_spool_pending || pending.live > rc_.max_spool_pending / kLivePendingShare)
    return false;
  if (!pass_->job->step(quiet ? 16 : 1)) {
    end_pass();
    return planned_;
  }
  return true;
}

void Reconciler::write_state() {
  ReconcileState s;
  s.live_until = gap_since_.value_or(covered_until_);
  live_.correlator().for_each_open([&](const correlator::Job& job) {
    if (!s.open_since || job.started_at < *s.open_since) s.open_since = job.started_at;
    if (s.open.size() < kMaxOpenJids)
      s.open.push_back(job.jid);
    else
      s.open_truncated = true;
  });
  // A pass still reading covers nothing yet: the next start reads from its
  // beginning again.
  if (pass_) s.live_until = std::min(s.live_until, pass_->since.value_or(0));
  if (planned_) s.live_until = std::min(s.live_until, planned_since_.value_or(0));
  // A failed write keeps the record before it (older coverage: the next
  // start reads more of the cache again, which indexes nothing twice).
  if (auto written = state_.write(s); !written) {
    if (counts_.state_write_errors++ == 0)
      log::error("reconcile: cannot record coverage: {}; the record before stays", written.error().text());
  }
}

void Reconciler::stop() { write_state(); }

void publish_reconcile_metrics(Metrics& m, const ReconcileCounts& counts, const BackfillCounts& backfill,
                               const jobcache::JobCacheStats& cache, bool running) {
  using enum MetricId;
  using jobcache::JobOutcome;
  m.counter(reconcile_passes, counts.passes);
  m.counter(reconcile_jobs, {"indexed"}, backfill.jobs_indexed);
  m.counter(reconcile_jobs, {"running"}, backfill.jobs_running);
  m.counter(reconcile_jobs, {"followed"}, counts.jobs_followed);
  m.counter(reconcile_jobs, {"known"}, counts.jobs_known);
  m.counter(
      reconcile_jobs, {"not_read"},
      cache.count(JobOutcome::incomplete) + cache.count(JobOutcome::undecodable) + cache.count(JobOutcome::unreadable));
  m.gauge(reconcile_running, running ? 1.0 : 0.0);
  m.counter(reconcile_errors, {"cache_unreadable"}, counts.passes_failed);
  m.counter(reconcile_errors, {"state_write"}, counts.state_write_errors);
}

}  // namespace salttap::recovery
