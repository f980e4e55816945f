#pragma once
// DocumentBuilder: turns what the correlator knows into the documents of
// docs/documents.md, as bulk NDJSON (action line + source line), ready
// for the spool. It is the correlator's observer (a job document when a job
// opens, a return document per return, state documents per state) and is
// also fed settled jobs, alerts and raw events by the pipeline.
//
// Secrets: returns and event data go through the Redactor (key patterns,
// PEM blocks, whole returns of functions like pillar.*) before they are
// written; job arguments and failure reasons were redacted by the correlator.
// Single-threaded (the pipeline thread).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/glob_list.h"
#include "correlator/alert.h"
#include "correlator/correlator.h"
#include "correlator/redactor.h"
#include "indexer/document.h"
#include "indexer/index_layout.h"
#include "tap/event.h"

namespace salttap::indexer {

// What a job document's external version counts from (docs/documents.md):
//   emission  when it is written: a later word on a job always wins (live)
//   jid       the job's own time, its jid's (else its start): earlier than
//             any version the live stream gives the same job, so a document
//             made from the job cache never replaces one written live
enum class JobVersionClock : std::uint8_t { emission, jid };

struct DocumentOptions {
  IndexLayout layout;
  std::string master_id = "master";  // first part of every _id
  // The masters whose salttaps share it form one fleet (docs/masters.md):
  // every document's `fleet`. Empty: master_id.
  std::string fleet_id;
  const std::string& fleet() const { return fleet_id.empty() ? master_id : fleet_id; }
  bool jobs = true;
  bool returns = true;
  bool states = false;  // one document per state (the returner's states_single_index)
  bool events = true;
  bool alerts = true;
  // Raw events: a tag is indexed when it matches an include glob and no
  // exclude glob. By default job traffic is left to the jobs and returns
  // indices (the same data, typed).
  std::vector<std::string> events_include = {"*"};
  std::vector<std::string> events_exclude = {"salt/job/*/new", "salt/job/*/ret/*", "salt/job/*/prog/*"};
  // Jobs, returns and states of these functions are not indexed (globs; a
  // multi-function job is skipped when every function is). The whitelist,
  // when not empty, keeps only jobs with at least one matching function.
  std::vector<std::string> functions_blacklist = {"saltutil.find_job", "saltutil.running"};
  std::vector<std::string> functions_whitelist;
  std::size_t text_cap = std::size_t{32} * 1024;  // return_text, data_text, changes_text, args_text
  std::size_t list_cap = 1000;                    // minion names per list in a job document
  bool return_flat = true;                        // the server has flattened / flat_object (index_setup)
  JobVersionClock job_versions = JobVersionClock::emission;

  // What a config reload may change: the filters (events, events_include,
  // events_exclude, functions_blacklist, functions_whitelist) and text_cap,
  // taken from `next`; where documents go (layout, master_id, classes,
  // versions) stays.
  void take_reloadable(const DocumentOptions& next);
};

struct DocumentStats {
  std::uint64_t built[kDocClasses] = {};
  std::uint64_t skipped_by_function = 0;  // blacklist / whitelist
  std::uint64_t events_filtered = 0;      // tag include / exclude
  std::uint64_t returns_truncated = 0;    // return_text cut at text_cap
  std::uint64_t redactions = 0;
};

class DocumentBuilder final : public correlator::CorrelatorObserver {
 public:
  DocumentBuilder(DocumentOptions options, std::shared_ptr<const correlator::Redactor> redactor, const Clock& clock);

  // Documents built since the last take_docs(), in build order.
  std::vector<BulkDoc> take_docs();
  bool has_docs() const { return !docs_.empty(); }
  std::size_t pending_docs() const { return docs_.size(); }

  // Must be set before events flow: names minions (the correlator's registry).
  void set_minions(const correlator::MinionRegistry* minions) { minions_ = minions; }

  // CorrelatorObserver
  void job_opened(const correlator::Job& job) override;
  void job_returned(const correlator::Job& job, correlator::MinionId minion, const tap::Event& ret,
                    const correlator::ReturnAnalysis& analysis, bool late) override;

  // From the correlator's sink: the job document; on `settled`, a return
  // document for every minion that never returned.
  void on_job(correlator::JobUpdate update, const correlator::Job& job);
  void on_alert(const correlator::Alert& alert);
  // A minion's entity document (fleet/entity_document.h): `json` is its
  // source object without @timestamp and salttap.*; written to
  // <prefix>-minions, _id <master>/<minion>, external `version`.
  void on_minion_entity(std::string_view minion, std::int64_t version, Micros updated_at, std::string_view json);
  void on_event(const tap::Event& event);

  // A config reload (`run`, SIGHUP): DocumentOptions::take_reloadable(next)
  // and the redactor, for the documents built from now on.
  void reconfigure(const DocumentOptions& next, std::shared_ptr<const correlator::Redactor> redactor);

  // Once index setup knows whether the returns template maps `return_flat`.
  void set_return_flat(bool on) { options_.return_flat = on; }

  const DocumentStats& stats() const { return stats_; }
  const DocumentOptions& options() const { return options_; }

 private:
  bool indexes_job(const correlator::Job& job) const;
  void write_job(const correlator::Job& job, std::string_view update, unsigned rank);
  void write_missing_returns(const correlator::Job& job);
  void write_states(const correlator::Job& job, std::string_view minion, const msgpack::object& states,
                    std::string_view stamp);
  // Appends "<action>\n" to `doc`; `version` 0 means op `create`.
  void action(std::string& doc, std::string_view index, std::string_view id, std::int64_t version) const;
  void push(DocClass cls, std::string&& ndjson);
  void compile_globs();

  DocumentOptions options_;
  // options_'s glob lists, compiled (compile_globs) for the per-event checks.
  GlobList events_include_;
  GlobList events_exclude_;
  GlobList functions_blacklist_;
  GlobList functions_whitelist_;
  std::shared_ptr<const correlator::Redactor> redactor_;
  const Clock& clock_;
  const correlator::MinionRegistry* minions_ = nullptr;
  std::vector<BulkDoc> docs_;
  DocumentStats stats_;
  std::string scratch_;
};

}  // namespace salttap::indexer
