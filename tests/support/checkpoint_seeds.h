#pragma once
// What the checkpoint tests and the checkpoint fuzz seeds share: a job with
// every field set, a small snapshot holding it, a real Salt release's
// captures as one stream, the replay settings, and the seeds of
// tests/fuzz/corpus/checkpoint as the real writer writes them
// (tests/fuzz/write_checkpoint_seeds.cpp writes them; CheckpointSeeds checks
// the committed ones).

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "config/config.h"
#include "correlator/correlator_snapshot.h"
#include "pipeline/document_pipeline.h"
#include "recovery/checkpoint_format.h"
#include "tap/event.h"
#include "tests/support/capture_events.h"
#include "tests/support/captures.h"

namespace salttap::testing {

// A job with every field set to something other than its default.
inline correlator::Job full_job() {
  using namespace correlator;
  Job j;
  j.jid = "20261201234500123456";
  j.kind = JobKind::scheduled;
  j.fun = "state.apply,test.ping";
  j.user = "sudo_alice";
  j.tgt = "minion-a,minion-b";
  j.tgt_type = "list";
  j.args_json = R"(["web",{"test":true,"password":"<redacted>"}])";
  j.started_at = 1'795'980'269'000'001;
  j.deadline = j.started_at + 60'000'000;
  j.settled_at = j.started_at + 5'000'000;
  j.next_check = j.settled_at + 3'600'000'000;
  j.minions = {0, 1, 2, 3};
  j.flags = {kExpected | kSucceeded, kExpected | kFailed | kLate, kExpected | kPending, kMissing};
  j.expected = 3, j.pending = 1, j.succeeded = 1, j.failed = 1, j.missing = 1, j.late = 1;
  j.extended = {{2, j.deadline + 30'000'000}};
  j.progress_events = 7;
  j.state_run = true;
  j.states.total = 9, j.states.succeeded = 5, j.states.failed = 2, j.states.changed = 3, j.states.would_change = 1;
  j.failed_states = {{1, FailedState{"needs_fail", "/bin/false", "cmd.run", "Command \"/bin/false\" run", 4}}};
  j.failures = {{1, "1 of 2 states failed"}};
  j.outcome_success = false;
  j.outcome_reason = "runner raised";
  j.risk.level = RiskLevel::high;
  j.risk.reasons = {"state_on_all: a state run on every minion", "other: reason"};
  j.settled = true;
  j.updates = 2;
  j.rerun_of = "20261201234400000001";
  j.args_redacted = true;
  return j;
}

// Every capture of one Salt release, one after the other (they were recorded
// in sequence, so time only moves forward).
inline std::vector<tap::Event> release_events(const std::string& release) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(captures_dir() / release))
    if (entry.path().extension() == ".raw") names.push_back(release + "/" + entry.path().filename().string());
  std::sort(names.begin(), names.end());
  std::vector<tap::Event> all;
  for (const auto& name : names)
    for (auto& e : capture_events(name)) all.push_back(std::move(e));
  return all;
}

inline config::Config replay_config(bool short_timers) {
  config::Config c = config::default_config();
  c.master_id = "checkpoint-test";
  if (short_timers) {
    // Deadlines, orphan settling and the late window all fire inside the
    // captures, so restored timers are exercised, not only open jobs.
    c.correlator.missing_after = 2 * kMicrosPerSecond;
    c.correlator.orphan_settle = 1 * kMicrosPerSecond;
    c.correlator.late_grace = 5 * kMicrosPerSecond;
  }
  return c;
}

inline correlator::CorrelatorSnapshot small_snapshot(const std::string& jid) {
  correlator::CorrelatorSnapshot s;
  s.minions = {"minion-a", "minion-b", "minion-c", "minion-d"};
  s.jobs = {full_job()};
  s.jobs[0].jid = jid;
  return s;
}

// The fuzz seeds by name: snapshots of a real capture's replay at several cut
// points, a job with every field set, an empty one, and broken copies (one per
// reason a file is refused).
inline std::vector<std::pair<std::string, std::string>> checkpoint_fuzz_seeds() {
  using recovery::encode_checkpoint;
  std::vector<std::pair<std::string, std::string>> seeds;
  seeds.emplace_back("empty", encode_checkpoint({}, 0));
  seeds.emplace_back("every-field", encode_checkpoint(small_snapshot("20261201234500123456"), 1'795'980'269'000'000));
  const std::vector<tap::Event> events = release_events("salt-3006.25");
  const config::Config config = replay_config(true);
  for (const std::size_t percent : {10, 35, 60, 85}) {
    const std::size_t cut = events.size() * percent / 100;
    ManualClock clock(0);
    pipeline::DocumentPipeline pipeline(config, clock);
    for (std::size_t i = 0; i < cut; ++i) {
      if (auto stamp = events[i].string_field("_stamp"))
        if (auto t = parse_salt_stamp(*stamp); t && *t > clock.now()) clock.set(*t);
      pipeline.advance();
      pipeline.on_event(events[i]);
    }
    if (pipeline.correlator().tracked_jobs() == 0)
      throw std::runtime_error("no job open at " + std::to_string(percent) + "% of salt-3006.25's captures");
    seeds.emplace_back("salt-3006.25-at-" + std::to_string(percent) + "pct",
                       encode_checkpoint(pipeline.correlator().snapshot(), clock.now()));
  }
  const std::string good = seeds[1].second;
  std::string future = good, flipped = good, magic = good;
  future[11] = 3;
  flipped[good.size() - 5] ^= 0x10;
  magic[3] = 'x';
  seeds.emplace_back("bad-truncated", good.substr(0, good.size() - 7));
  seeds.emplace_back("bad-version-3", future);
  seeds.emplace_back("bad-crc", flipped);
  seeds.emplace_back("bad-magic", magic);
  correlator::CorrelatorSnapshot outside = small_snapshot("1");
  outside.minions.resize(1);
  seeds.emplace_back("bad-minion-outside-table", encode_checkpoint(outside, 1));
  return seeds;
}

}  // namespace salttap::testing
