#pragma once
// One job across several masters, merged when it is read (nothing new is
// written): every job document with the same fleet and jid is one job, as
// long as they agree on what ran. Each salttap indexes what its own master
// saw (a multi-master minion's return reaches every master from Salt 3005
// on; a syndic republishes the job below; a 3007 cluster re-publishes its
// peers' events), so the merge is the union of their views:
//
//   expected   the union of each master's expected minions, minus the
//              syndics that only stood in for the minions below them
//   outcome    per minion, the best any master saw: succeeded > failed >
//              late (either) > missing > pending
//   seen_by    the masters with a document of the job
//   publisher  the master whose document has the `new` event's user and
//              arguments (the earliest such document; none: "")
//   counts     recomputed from the merged outcomes
//
// Collision guard: documents merge only when their function and arguments
// agree; a document without arguments of its own (an orphan job: returns
// without a `new`) joins the one job of its function. Anything else is
// "same jid, different jobs": separate MergedJobs. Reference: docs/masters.md.

#include <cstdint>
#include <string>
#include <vector>

#include "history/search_response.h"

namespace salttap::history {

struct MergedMinion {
  std::string minion;
  std::string status;  // succeeded, failed, missing, pending
  bool late = false;
  std::vector<std::string> seen_by;  // the masters that had its return (or, when none did, its verdict)
};

struct MergedJob {
  // The publisher's document (else the newest), with status and counts
  // replaced by the merged ones; its `source` is the document as stored.
  JobRow job;
  std::string fleet, publisher;
  std::vector<std::string> seen_by;   // masters, sorted
  std::vector<JobRow> documents;      // every merged document, newest first
  std::vector<MergedMinion> minions;  // by name (from the documents' minion lists)
  bool lists_capped = false;          // a document's minion lists were cut: counts are the largest any master counted
};

// `documents`: the job documents of one jid (any fleets, any order); the
// jobs they make, newest first. One document: that document as it is.
std::vector<MergedJob> merge_job_documents(std::vector<JobRow> documents);

// The rows of `salttap jobs`: `rows` as a jobs search returns them (each
// jid's documents together), merged per (fleet, jid), in their order.
std::vector<MergedJob> merge_job_rows(std::vector<JobRow> rows);

// A merged job's `_source` for JSON output: the publisher's document with
// status, counts and minion lists merged, plus `seen_by`, `publisher` and
// `fleet`.
std::string merged_source(const MergedJob& job);

}  // namespace salttap::history
