#pragma once
// Correlator: follows every job from `salt/job/<jid>/new` to each
// `ret/<minion>` and decides who succeeded, who failed and who never
// returned (docs/salt-event-bus.md §7), for every job - not only the ones a CLI
// process happened to wait for.
//
//   new           opens a job with its expected minions (none: matched nothing)
//   ret/<minion>  settles that minion: succeeded or failed (return_analysis.h);
//                 a duplicate is ignored, a return after the deadline is late
//   prog/...      counted as progress
//   deadline      (per function glob) minions still pending become missing;
//                 a saltutil.find_job answer saying the job still runs on a
//                 minion extends that minion's deadline
//   no `new`      returns alone form jobs of kind scheduled (data.schedule)
//                 or orphan (salt-call, jobs begun before we connected)
//   salt/run, salt/wheel   jobs of kind runner / wheel
// Time comes from the injected Clock; call advance() to fire deadlines.
//
// Memory (docs/ARCHITECTURE.md, "Memory model"): an open job is a Job; once
// settled and its documents built, it waits for late returns as a
// SettledJob (settled_job.h), in bytes. Tracked jobs stay under
// max_jobs and memory_budget: past either, the oldest settled jobs leave
// first (emitted `final`), then the oldest open ones (settled at once, their
// pending minions missing, alerted as evicted); a return for a job evicted
// early is counted as late-unknown.

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/glob_list.h"
#include "correlator/audit.h"
#include "correlator/correlator_config.h"
#include "correlator/correlator_snapshot.h"
#include "correlator/job.h"
#include "correlator/minion_registry.h"
#include "correlator/redactor.h"
#include "correlator/settled_job.h"
#include "tap/event.h"

namespace salttap::correlator {

enum class JobUpdate : std::uint8_t {
  settled,  // every minion settled, or the deadline passed
  updated,  // a late return changed a settled job
  final,    // evicted after late_grace (or at the end of a replay): the last word
};

struct CorrelatorStats {
  std::uint64_t events = 0;
  std::uint64_t jobs_opened = 0;
  std::uint64_t jobs_settled = 0;
  std::uint64_t returns = 0;
  std::uint64_t duplicate_returns = 0;
  std::uint64_t late_returns = 0;
  std::uint64_t unexpected_returns = 0;  // from a minion not in the job's list
  std::uint64_t missing_minions = 0;
  std::uint64_t noise_events = 0;  // find_job / saltutil.running traffic
  std::uint64_t find_job_extensions = 0;
  std::uint64_t progress_events = 0;
  std::uint64_t minion_events = 0;  // start, auth, presence
  std::uint64_t other_events = 0;
  std::uint64_t evicted_jobs = 0;  // over max_jobs, before their grace ended
  // Over memory_budget: settled jobs dropped before their grace ended, and
  // open jobs settled early (pending minions missing, an `evicted` alert).
  std::uint64_t budget_evicted_settled = 0;
  std::uint64_t budget_evicted_open = 0;
  std::uint64_t late_unknown_returns = 0;  // for a job evicted early: no job to judge them by, not indexed
};

// Finer-grained than the Sink, for the indexer: a job document when a job
// opens, and a return document for every return the correlator accepts.
class CorrelatorObserver {
 public:
  virtual ~CorrelatorObserver() = default;
  // After `new` (salt/job, salt/run, salt/wheel) was recorded.
  virtual void job_opened(const Job& /*job*/) {}
  // After a ret/<minion> was recorded (duplicates are not reported); `late`
  // when it arrived after its deadline or after the job settled.
  virtual void job_returned(const Job& /*job*/, MinionId /*minion*/, const tap::Event& /*ret*/,
                            const ReturnAnalysis& /*analysis*/, bool /*late*/) {}
};

class Correlator {
 public:
  using Sink = std::function<void(JobUpdate, const Job&)>;

  Correlator(CorrelatorConfig config, const Clock& clock, Sink sink, std::shared_ptr<const Auditor> auditor = nullptr,
             std::shared_ptr<const Redactor> redactor = nullptr);

  // Not owned; must outlive the correlator. One at most.
  void set_observer(CorrelatorObserver* observer) { observer_ = observer; }

  void on_event(const tap::Event& event);
  // Fires every deadline and eviction due at clock.now().
  void advance();
  // End of a replay: every open job's deadline passes now, then every job is
  // emitted as final.
  void settle_all();

  // A config reload (`run`, SIGHUP): what comes after uses the new settings,
  // rules and redaction; what is tracked stays as it is. Open jobs keep their
  // expected minions and the deadline they got when they opened (a job is
  // judged by the rules it began under); timers already set (a settled job's
  // late_grace, an orphan's settle time) keep their time. New jobs, returns
  // and find_job answers use the new config; a lower max_jobs evicts at the
  // next event. Null auditor / redactor: none.
  void reconfigure(CorrelatorConfig config, std::shared_ptr<const Auditor> auditor,
                   std::shared_ptr<const Redactor> redactor);
  const CorrelatorConfig& config() const { return config_; }

  // Every tracked job as plain data (correlator_snapshot.h).
  CorrelatorSnapshot snapshot() const;
  // Takes the snapshot's jobs in, after the ones already tracked, with their
  // timers; the next advance() fires what fell due while nothing ran (a
  // deadline passed while down settles with the live rules). A jid already
  // tracked is kept as it is. Returns how many jobs were taken in.
  std::size_t restore(const CorrelatorSnapshot& snapshot);
  // Grows with every event and every timer fired: a checkpoint writer skips
  // writing while it has not moved.
  std::uint64_t revision() const { return revision_; }

  const CorrelatorStats& stats() const { return stats_; }
  const MinionRegistry& minions() const { return minions_; }
  std::size_t tracked_jobs() const { return jobs_.size() + settled_.size(); }
  std::size_t settled_jobs() const { return settled_.size(); }  // compact, waiting for late returns
  // A job the correlator holds (open, or settled and still inside
  // late_grace), whole, or nothing.
  std::optional<Job> find(std::string_view jid) const;
  // Calls fn(job) for every job still open (not settled), oldest first.
  template <typename Fn>
  void for_each_open(Fn&& fn) const {
    for (const auto& [seq, jid] : order_)
      if (const Job* job = find_whole(jid); job && !job->settled) fn(*job);
  }
  // What the tracked jobs hold (the budget's measure), and the same with the
  // minion registry.
  std::size_t jobs_bytes() const;
  std::size_t memory_bytes() const;

 private:
  Job& open_job(std::string_view jid, JobKind kind, Micros started_at);
  void on_new(std::string_view jid, const tap::Event& e);
  void on_ret(std::string_view jid, std::string_view minion, const tap::Event& e, Job* job);
  void on_find_job_ret(MinionId minion, const tap::Event& e);
  void on_syndic_minions(std::string_view syndic, std::string_view jid, const tap::Event& e);
  void on_runner(std::string_view jid, std::string_view what, JobKind kind, const tap::Event& e);
  void on_minion_event(std::string_view tag, const tap::Event& e);
  bool is_noise(const tap::Event& e) const;
  std::string redact_text(const std::string& text) const;
  static void note_rerun_of(Job& job, const tap::Event& e);
  void describe_call(Job& job, const msgpack::object* fun, const msgpack::object* args, const msgpack::object* tgt,
                     const tap::Event& e);
  void schedule(Job& job, Micros at);
  void expire(Job& job);
  void settle(Job& job);
  void evict(const std::string& jid, bool early);
  void enforce_cap();
  // Settled jobs: compact while in grace, whole again for a late return.
  void park(Job& job, bool queued);
  Job* revive(std::string_view jid);
  Job* find_or_revive(std::string_view jid);
  void repark();
  void enqueue_grace(Micros grace_end, const JidKey& key, std::uint64_t seq);
  void drop_settled(const JidKey& key);
  bool drop_oldest_settled();
  void evict_oldest_whole(Job::Evicted why);
  void remember_dropped(const JidKey& key, Micros until);
  bool was_dropped(std::string_view jid) const;
  void note_progress(std::string_view jid);
  void account(Job& job);
  const Job* find_whole(std::string_view jid) const {
    auto it = jobs_.find(absl::string_view(jid.data(), jid.size()));
    return it == jobs_.end() ? nullptr : it->second.get();
  }

  CorrelatorConfig config_;
  const Clock& clock_;
  Sink sink_;
  CorrelatorObserver* observer_ = nullptr;
  std::shared_ptr<const Auditor> auditor_;
  std::shared_ptr<const Redactor> redactor_;
  MinionRegistry minions_;
  absl::flat_hash_map<std::string, std::unique_ptr<Job>> jobs_;  // looked up on every return
  Job* find_job(std::string_view jid) {
    auto it = jobs_.find(absl::string_view(jid.data(), jid.size()));
    return it == jobs_.end() ? nullptr : it->second.get();
  }
  GlobList noise_funs_;                            // config_.noise_funs
  using Timer = std::pair<Micros, std::uint64_t>;  // when, the job's open_seq (order_ names it)
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::map<std::uint64_t, std::string> order_;  // whole jobs by opening order, for the cap and final flush
  LoadPool loads_;
  DetailPool details_;
  absl::flat_hash_map<JidKey, SettledJob> settled_;
  std::deque<std::pair<Micros, JidKey>> grace_queue_;  // settled_ by settling order, with its end of grace
  std::size_t settled_heap_bytes_ = 0;                 // settled_'s minion lists
  std::size_t open_bytes_ = 0;                         // the whole jobs' Job::memory_bytes()
  std::string revived_;                                // the jid revive() made whole for this event
  Micros revived_grace_end_ = 0;
  // Jobs evicted early, until their grace would have ended (at most
  // kDroppedKept): their returns are late-unknown, not new orphans.
  std::deque<std::pair<Micros, JidKey>> dropped_;
  absl::flat_hash_set<JidKey> dropped_set_;
  std::uint64_t next_budget_warning_ = 1;  // budget evictions at which the next warning is logged
  std::uint64_t next_seq_ = 0;
  std::uint64_t revision_ = 0;
  CorrelatorStats stats_;
};

}  // namespace salttap::correlator
