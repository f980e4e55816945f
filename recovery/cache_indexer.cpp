#include "recovery/cache_indexer.h"

#include <optional>
#include <utility>
#include <vector>

#include "common/enum_names.h"
#include "common/log.h"
#include "config/resolve.h"
#include "pipeline/document_pipeline.h"

namespace salttap::recovery {
namespace {

using jobcache::JobOutcome;

// Bad jobs logged one by one, per outcome; the rest only counted (a cache of
// thousands of broken files must not flood the log).
constexpr std::uint64_t kLoggedPerOutcome = 20;

config::Config backfill_config(const config::Config& config) {
  config::Config c = config;
  c.master_id = config::effective_master_id(config, tap::MasterBus{});  // once, not for every job's pipeline
  c.fleet_id = config::effective_fleet_id(c, tap::MasterBus{});
  c.indexer.documents.job_versions = indexer::JobVersionClock::jid;
  return c;
}

// How a skipped job is told in the log where its outcome's own name reads poorly in a sentence.
constexpr EnumName<JobOutcome> kWhyNames[] = {{JobOutcome::incomplete, "incomplete"},
                                              {JobOutcome::undecodable, "does not decode"},
                                              {JobOutcome::unreadable, "cannot be read"}};

std::string_view why(JobOutcome o) { return name_of(kWhyNames, o, jobcache::to_string(o)); }

}  // namespace

CacheIndexer::CacheIndexer(const config::Config& config, jobcache::JobCacheSource& source, pipeline::DocumentSink& sink,
                           const Clock& now, std::function<bool()> give_up)
    : config_(backfill_config(config)), source_(source), sink_(sink), now_(now), give_up_(std::move(give_up)) {}

void CacheIndexer::reconfigure(const config::Config& config) { config_ = backfill_config(config); }

bool CacheIndexer::step(std::size_t max_jobs) {
  for (std::size_t i = 0; i < max_jobs; ++i) {
    jobcache::JobRead read;
    const bool more = source_.next(read);
    for (const std::string& e : source_.take_bucket_errors()) log::error("backfill: cannot list {}", e);
    if (!more) return false;
    handle(std::move(read));
  }
  return true;
}

void CacheIndexer::handle(jobcache::JobRead&& read) {
  switch (read.outcome) {
    case JobOutcome::ready:
      if (claim_ && claim_(read)) return;
      index(std::move(read));
      return;
    case JobOutcome::outside_window:
    case JobOutcome::noise:
    case JobOutcome::nocache:
      return;  // counted by the source
    case JobOutcome::incomplete:
    case JobOutcome::undecodable:
    case JobOutcome::unreadable:
      report(read);
      return;
  }
}

void CacheIndexer::report(const jobcache::JobRead& read) {
  std::uint64_t& n = logged_[static_cast<std::size_t>(read.outcome)];
  if (n >= kLoggedPerOutcome) return;
  log::warn("backfill: skipped the job in {} (read {} times): {}: {}", read.dir.string(), read.attempt,
            why(read.outcome), read.error);
  if (++n == kLoggedPerOutcome)
    log::warn("backfill: further jobs that {} are counted in the summary, not logged", why(read.outcome));
}

void CacheIndexer::index(jobcache::JobRead&& read) {
  jobcache::CachedJob& job = *read.job;
  ManualClock clock(job.started_at());
  pipeline::DocumentPipeline pipeline(config_, clock);
  if (const auto flat = sink_.return_flat()) pipeline.documents().set_return_flat(*flat);

  // Returns go as they come; of the job documents only the last counts.
  std::optional<indexer::BulkDoc> job_doc;
  std::uint64_t sent = 0;
  const auto flush = [&](bool last) {
    std::vector<indexer::BulkDoc> docs = pipeline.take_docs();
    std::vector<indexer::BulkDoc> out;
    out.reserve(docs.size() + 1);
    for (indexer::BulkDoc& d : docs) {
      if (d.cls == indexer::DocClass::job)
        job_doc = std::move(d);
      else
        out.push_back(std::move(d));
    }
    if (last && job_doc) out.push_back(std::move(*job_doc));
    if (out.empty()) return;
    for (const indexer::BulkDoc& d : out) ++counts_.documents_by_class[static_cast<std::size_t>(d.cls)];
    counts_.documents += out.size();
    sent += out.size();
    sink_.put(out, give_up_);
  };

  tap::Event event;
  std::string error;
  while (true) {
    const auto next = job.next_event(event, error);
    if (next == jobcache::CachedJob::Next::end) break;
    if (next == jobcache::CachedJob::Next::failed) {
      ++counts_.jobs_failed;
      const std::string jid = job.jid();
      const bool again = source_.retry_later(std::move(read));
      log::warn("backfill: job {}: {}; {}", jid, error,
                again ? "reading it again later" : "skipped (its returns read so far may be indexed)");
      return;
    }
    // The clock stands at each event's time, as in a replay: deadlines that
    // passed before a late return fire first.
    if (const auto stamp = event.string_field("_stamp"))
      if (const auto t = parse_salt_stamp(*stamp); t && *t > clock.now()) clock.set(*t);
    pipeline.advance();
    pipeline.correlator().on_event(event);
    ++counts_.events;
    if (pipeline.documents().pending_docs() >= batch_docs_) flush(false);
  }

  // What the live path would know by now: a job the cache has whole settles;
  // one whose deadline (or a minion return's settling time) has passed
  // settles with its silent minions missing; the others are still running.
  const correlator::CorrelatorConfig& cc = config_.correlator;
  Micros due = job.last_event_time();
  if (!job.complete())
    due = job.shape() == jobcache::JobShape::minion_return ? job.last_event_time() + cc.orphan_settle
                                                           : job.started_at() + cc.deadline_for(job.fun());
  if (job.complete() || due <= now_.now()) {
    if (due > clock.now()) clock.set(due);
    pipeline.advance();
    pipeline.settle_all();  // the job's last word: `final`
  } else {
    ++counts_.jobs_running;
  }
  flush(true);
  counts_.ignored_out_files += job.ignored_out_files();
  ++(sent > 0 ? counts_.jobs_indexed : counts_.jobs_filtered);
}

}  // namespace salttap::recovery
