#pragma once
// CorrelatorSnapshot: the correlator's tracked jobs as plain data, so a writer
// elsewhere can persist them across a restart (recovery/checkpoint_format.h)
// and a restarted correlator can settle them exactly as if it had never
// stopped.
//
// Every tracked job is in it: the ones still waiting for returns (whole, in
// `jobs`) and the settled ones still inside their late-return window, in the
// compact form they wait in (`settled`, settled_job.h), their loads and
// details once each however many jobs share them. MinionIds index `minions`
// (the registry's names in id order, so a fresh correlator interns them back
// to the same ids). `next_check` is each whole job's one live timer,
// `grace_end` each settled one's.

#include <string>
#include <vector>

#include "correlator/job.h"
#include "correlator/settled_job.h"

namespace salttap::correlator {

// A settled job as the snapshot holds it: its `load` and `detail` index the
// snapshot's tables (0: none), not a correlator's pools; its `open_seq` is
// its place in the opening order of every job of the snapshot (the whole
// jobs fill the other places, in their order).
struct SettledEntry {
  std::string jid;
  SettledJob job;
};

struct CorrelatorSnapshot {
  std::vector<std::string> minions;   // MinionId -> name
  std::vector<Job> jobs;              // whole (open, or settled and not compactable), in opening order
  std::vector<JobLoad> loads;         // [0] unused
  std::vector<JobDetail> details;     // [0] unused
  std::vector<SettledEntry> settled;  // compact, in settling order
  std::size_t size() const { return jobs.size() + settled.size(); }
};

}  // namespace salttap::correlator
