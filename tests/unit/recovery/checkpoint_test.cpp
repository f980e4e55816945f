// The correlator's checkpoint (docs/checkpoint.md): every job field survives
// the file; a restored correlator settles its jobs exactly as one that never
// stopped (real captures replayed and cut at every event, the documents
// compared byte for byte); deadlines that passed while down settle on
// restore; bad files are refused by reason, counted and moved aside; a
// failed write leaves the old checkpoint.

#include <gtest/gtest.h>

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config.h"
#include "pipeline/document_pipeline.h"
#include "recovery/checkpoint_file.h"
#include "recovery/checkpoint_format.h"
#include "recovery/checkpoint_keeper.h"
#include "tests/support/checkpoint_seeds.h"
#include "tests/support/events.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/unprivileged.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;
using correlator::Job;
using correlator::JobKind;
using correlator::JobUpdate;
using testing::ev;
using testing::full_job;
using testing::kReturnedTrue;
using testing::new_job_event;
using testing::release_events;
using testing::replay_config;
using testing::return_event;
using testing::small_snapshot;

// A private directory, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "salttap-checkpoint-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Every field a checkpoint keeps, compared one by one (open_seq is not kept:
// a restored job is numbered after the ones already tracked).
void expect_same_job(const Job& a, const Job& b) {
  EXPECT_EQ(a.jid, b.jid);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.fun, b.fun);
  EXPECT_EQ(a.user, b.user);
  EXPECT_EQ(a.tgt, b.tgt);
  EXPECT_EQ(a.tgt_type, b.tgt_type);
  EXPECT_EQ(a.args_json, b.args_json);
  EXPECT_EQ(a.started_at, b.started_at);
  EXPECT_EQ(a.deadline, b.deadline);
  EXPECT_EQ(a.settled_at, b.settled_at);
  EXPECT_EQ(a.next_check, b.next_check);
  EXPECT_EQ(a.minions, b.minions);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.extended, b.extended);
  EXPECT_EQ(a.expected, b.expected);
  EXPECT_EQ(a.pending, b.pending);
  EXPECT_EQ(a.succeeded, b.succeeded);
  EXPECT_EQ(a.failed, b.failed);
  EXPECT_EQ(a.missing, b.missing);
  EXPECT_EQ(a.late, b.late);
  EXPECT_EQ(a.progress_events, b.progress_events);
  EXPECT_EQ(a.state_run, b.state_run);
  EXPECT_EQ(a.states.total, b.states.total);
  EXPECT_EQ(a.states.succeeded, b.states.succeeded);
  EXPECT_EQ(a.states.failed, b.states.failed);
  EXPECT_EQ(a.states.changed, b.states.changed);
  EXPECT_EQ(a.states.would_change, b.states.would_change);
  ASSERT_EQ(a.failed_states.size(), b.failed_states.size());
  for (std::size_t i = 0; i < a.failed_states.size(); ++i) {
    EXPECT_EQ(a.failed_states[i].first, b.failed_states[i].first);
    EXPECT_EQ(a.failed_states[i].second.id, b.failed_states[i].second.id);
    EXPECT_EQ(a.failed_states[i].second.name, b.failed_states[i].second.name);
    EXPECT_EQ(a.failed_states[i].second.function, b.failed_states[i].second.function);
    EXPECT_EQ(a.failed_states[i].second.comment, b.failed_states[i].second.comment);
    EXPECT_EQ(a.failed_states[i].second.run_num, b.failed_states[i].second.run_num);
  }
  EXPECT_EQ(a.failures, b.failures);
  EXPECT_EQ(a.outcome_success, b.outcome_success);
  EXPECT_EQ(a.outcome_reason, b.outcome_reason);
  EXPECT_EQ(a.risk.level, b.risk.level);
  EXPECT_EQ(a.risk.reasons, b.risk.reasons);
  EXPECT_EQ(a.settled, b.settled);
  EXPECT_EQ(a.updates, b.updates);
  EXPECT_EQ(a.rerun_of, b.rerun_of);
  EXPECT_EQ(a.args_redacted, b.args_redacted);
}

TEST(CheckpointFormat, EveryJobFieldSurvivesTheFile) {
  correlator::CorrelatorSnapshot s;
  s.minions = {"minion-a", "minion-b", "minion-c", "h\xc3\xa9llo"};
  s.jobs = {full_job(), Job{}};
  s.jobs[1].jid = "20261201234500999999";  // a job with every default
  s.jobs[1].outcome_success = true;
  const std::string bytes = recovery::encode_checkpoint(s, 42);
  const auto decoded = recovery::decode_checkpoint(bytes);
  ASSERT_TRUE(decoded) << decoded.error().why;
  const recovery::DecodedCheckpoint& d = decoded.value();
  EXPECT_EQ(d.written_at, 42);
  EXPECT_EQ(d.snapshot.minions, s.minions);
  ASSERT_EQ(d.snapshot.jobs.size(), 2U);
  expect_same_job(d.snapshot.jobs[0], s.jobs[0]);
  expect_same_job(d.snapshot.jobs[1], s.jobs[1]);
  EXPECT_EQ(recovery::encode_checkpoint(d.snapshot, 42), bytes);  // and back to the same bytes
}

// A file written before a job had items 24 and 25 (rerun_of, args_redacted)
// still restores: no rerun_of, and the arguments never trusted for a re-run.
TEST(CheckpointFormat, AJobOfTwentyFourItemsIsStillRead) {
  const fs::path file = fs::path(SALTTAP_SOURCE_DIR) / "tests/fuzz/corpus/checkpoint/every-field-24-items";
  const auto decoded = recovery::decode_checkpoint(read_bytes(file));
  ASSERT_TRUE(decoded) << decoded.error().why;
  const recovery::DecodedCheckpoint& d = decoded.value();
  ASSERT_FALSE(d.snapshot.jobs.empty());
  for (const Job& j : d.snapshot.jobs) {
    EXPECT_TRUE(j.rerun_of.empty()) << j.jid;
    EXPECT_TRUE(j.args_redacted) << j.jid;
  }
}

TEST(CheckpointFormat, TheHeaderIsMagicVersionLengthCrc) {
  const std::string bytes = recovery::encode_checkpoint({}, 0);
  ASSERT_GE(bytes.size(), recovery::kCheckpointHeaderBytes);
  EXPECT_EQ(bytes.substr(0, 8), "STAPCKPT");
  EXPECT_EQ(bytes.substr(8, 4), std::string("\0\0\0\2", 4));
  const auto length = static_cast<std::size_t>(static_cast<unsigned char>(bytes[15]));
  EXPECT_EQ(bytes.size(), recovery::kCheckpointHeaderBytes + length);
}

// Each bad file: the reason it is refused.
TEST(CheckpointFormat, BadBytesAreRefusedWithTheirReason) {
  correlator::CorrelatorSnapshot s;
  s.minions = {"minion-a", "minion-b", "minion-c", "minion-d"};
  s.jobs = {full_job()};
  const std::string good = recovery::encode_checkpoint(s, 1);
  const auto error_of = [](const std::string& b) -> std::optional<recovery::CheckpointError> {
    const auto d = recovery::decode_checkpoint(b);
    if (d) return std::nullopt;
    return d.error().kind;
  };

  EXPECT_EQ(error_of(""), recovery::CheckpointError::truncated);
  EXPECT_EQ(error_of(good.substr(0, 10)), recovery::CheckpointError::truncated);
  EXPECT_EQ(error_of(good.substr(0, good.size() - 1)), recovery::CheckpointError::truncated);
  EXPECT_EQ(error_of(good + "x"), recovery::CheckpointError::invalid);
  std::string magic = good;
  magic[0] = 'X';
  EXPECT_EQ(error_of(magic), recovery::CheckpointError::bad_magic);
  std::string future = good;
  future[11] = 3;
  EXPECT_EQ(error_of(future), recovery::CheckpointError::unknown_version);
  EXPECT_NE(recovery::decode_checkpoint(future).error().why.find("version 3"), std::string::npos);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x01;
  EXPECT_EQ(error_of(flipped), recovery::CheckpointError::bad_crc);
  std::string crc = good;
  crc[19] ^= 0x01;
  EXPECT_EQ(error_of(crc), recovery::CheckpointError::bad_crc);

  // A payload with a correct crc but the wrong shape: a minion id outside
  // the name table.
  correlator::CorrelatorSnapshot shape = s;
  shape.minions.resize(2);
  const auto d = recovery::decode_checkpoint(recovery::encode_checkpoint(shape, 1));
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().kind, recovery::CheckpointError::invalid);
  EXPECT_NE(d.error().why.find("job.minions"), std::string::npos) << d.error().why;
  // Unsorted minions, flags not one per minion, an unknown kind.
  shape = s;
  std::swap(shape.jobs[0].minions[0], shape.jobs[0].minions[1]);
  EXPECT_EQ(error_of(recovery::encode_checkpoint(shape, 1)), recovery::CheckpointError::invalid);
  shape = s;
  shape.jobs[0].flags.pop_back();
  EXPECT_EQ(error_of(recovery::encode_checkpoint(shape, 1)), recovery::CheckpointError::invalid);
  shape = s;
  shape.jobs[0].kind = static_cast<JobKind>(9);
  EXPECT_EQ(error_of(recovery::encode_checkpoint(shape, 1)), recovery::CheckpointError::invalid);
}

// ---- the strongest form: real captures, cut and restored ----------------

// One replay of `events` as `run` sees them: the clock at each event's
// _stamp, deadlines advanced before each event and after it (the end of a
// batch). Before every event whose index is in `cuts`, salttap "restarts":
// the correlator's snapshot goes through the file format and into a new
// pipeline. Returns every document's NDJSON, in order.
std::string replay(const std::vector<tap::Event>& events, const config::Config& config,
                   const std::set<std::size_t>& cuts) {
  ManualClock clock(0);
  auto pipeline = std::make_unique<pipeline::DocumentPipeline>(config, clock);
  std::string out;
  const auto take = [&] {
    for (const auto& doc : pipeline->take_docs()) out += doc.ndjson;
  };
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (cuts.contains(i)) {
      const std::string bytes = recovery::encode_checkpoint(pipeline->correlator().snapshot(), clock.now());
      pipeline = std::make_unique<pipeline::DocumentPipeline>(config, clock);
      const auto d = recovery::decode_checkpoint(bytes);
      EXPECT_TRUE(d) << d.error().why;
      if (d) pipeline->correlator().restore(d.value().snapshot);
      pipeline->advance();
      take();
    }
    const tap::Event& e = events[i];
    if (auto stamp = e.string_field("_stamp"))
      if (auto t = parse_salt_stamp(*stamp); t && *t > clock.now()) clock.set(*t);
    pipeline->advance();
    pipeline->on_event(e);
    pipeline->advance();
    take();
  }
  pipeline->settle_all();
  take();
  return out;
}

// "" when equal; else where the two document streams part, with context
// (the streams are megabytes: printing them whole helps nobody).
std::string first_difference(const std::string& got, const std::string& want) {
  if (got == want) return {};
  std::size_t at = 0;
  while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
  const std::size_t from = at < 200 ? 0 : at - 200;
  return fmt::format("documents differ at byte {} of {}\n got: {}\nwant: {}", at, want.size(), got.substr(from, 400),
                     want.substr(from, 400));
}

class CheckpointCaptures : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(CheckpointCaptures, ARestoredRunWritesTheSameDocumentsAsOneThatNeverStopped) {
  const auto& [release, short_timers] = GetParam();
  const std::vector<tap::Event> events = release_events(release);
  ASSERT_GT(events.size(), 100U);
  const config::Config config = replay_config(short_timers);
  const std::string uninterrupted = replay(events, config, {});
  ASSERT_NE(uninterrupted.find("\"kind\":\"job\""), std::string::npos);
  if (short_timers) {
    // The short timers fired inside the captures: minions went missing, and
    // jobs were written a last time when their late window ended.
    ASSERT_NE(uninterrupted.find("\"status\":\"missing\""), std::string::npos);
    ASSERT_NE(uninterrupted.find("\"update\":\"final\""), std::string::npos);
  }

  // A restart before every single event at once ...
  std::set<std::size_t> every;
  for (std::size_t i = 0; i < events.size(); ++i) every.insert(i);
  EXPECT_EQ(first_difference(replay(events, config, every), uninterrupted), "") << "restarted before every event";
  // ... and one restart at a time, at evenly spread cut points.
  const std::size_t step = std::max<std::size_t>(1, events.size() / 40);
  for (std::size_t cut = 0; cut < events.size(); cut += step)
    ASSERT_EQ(first_difference(replay(events, config, {cut}), uninterrupted), "") << "restarted before event " << cut;
}

INSTANTIATE_TEST_SUITE_P(Releases, CheckpointCaptures,
                         ::testing::Combine(::testing::Values(std::string("salt-3006.25"), std::string("salt-3006.26")),
                                            ::testing::Bool()));

// ---- deadlines while down ------------------------------------------------

// The master's time of the jobs' `new` events.
constexpr const char* kStamped = R"(, "_stamp": "2026-11-29T19:24:29.000000")";

struct Recorded {
  std::vector<std::pair<JobUpdate, Job>> updates;
  correlator::Correlator::Sink sink() {
    return [this](JobUpdate u, const Job& j) { updates.emplace_back(u, j); };
  }
};

// A settled job waits for late returns compact; the checkpoint holds it so,
// and a late return after the restore updates it as in the run that never
// stopped.
TEST(CheckpointRestore, ASettledJobComesBackCompactAndTakesItsLateReturn) {
  correlator::CorrelatorConfig config;
  config.missing_after = 10 * kMicrosPerSecond;
  const Micros t0 = 1'795'980'269'000'000;
  const std::string jid = "20261201000000000002";
  const auto late_return = return_event(jid, "minion-b");
  ManualClock clock(t0);
  Recorded before;
  correlator::Correlator first(config, clock, before.sink());
  first.on_event(new_job_event(jid, "test.ping", R"(["minion-a", "minion-b"])", "[]", kStamped));
  first.on_event(return_event(jid, "minion-a"));
  clock.advance(60 * kMicrosPerSecond);
  first.advance();  // settles, minion-b missing
  ASSERT_EQ(first.settled_jobs(), 1U);
  const auto decoded = recovery::decode_checkpoint(recovery::encode_checkpoint(first.snapshot(), clock.now()));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_TRUE(decoded.value().snapshot.jobs.empty()) << "no whole job in the file";
  ASSERT_EQ(decoded.value().snapshot.settled.size(), 1U);

  Recorded after;
  correlator::Correlator second(config, clock, after.sink());
  EXPECT_EQ(second.restore(decoded.value().snapshot), 1U);
  EXPECT_EQ(second.settled_jobs(), 1U);
  first.on_event(late_return);
  second.on_event(late_return);
  ASSERT_EQ(after.updates.size(), 1U);
  ASSERT_EQ(before.updates.back().first, JobUpdate::updated);
  EXPECT_EQ(after.updates[0].first, JobUpdate::updated);
  const Job& restored = after.updates[0].second;
  const Job& never_stopped = before.updates.back().second;
  EXPECT_EQ(restored.succeeded, 2U);
  EXPECT_EQ(restored.missing, 0U);
  EXPECT_EQ(restored.late, 1U);
  expect_same_job(restored, never_stopped);
}

TEST(CheckpointRestore, ADeadlinePassedWhileDownSettlesOnRestoreByTheLiveRules) {
  correlator::CorrelatorConfig config;
  config.missing_after = 10 * kMicrosPerSecond;
  const Micros t0 = 1'795'980'269'000'000;
  ManualClock clock(t0);
  Recorded before;
  correlator::Correlator first(config, clock, before.sink());
  const std::string jid = "20261201000000000001";
  first.on_event(new_job_event(jid, "test.sleep", R"(["minion-a", "minion-b"])", "[8]", kStamped));
  first.on_event(return_event(jid, "minion-a", kReturnedTrue, "test.sleep"));
  const std::string bytes = recovery::encode_checkpoint(first.snapshot(), clock.now());
  EXPECT_TRUE(before.updates.empty());

  // Down for an hour: the 10 s deadline passed long ago.
  clock.advance(3600 * kMicrosPerSecond);
  Recorded after;
  correlator::Correlator second(config, clock, after.sink());
  EXPECT_EQ(second.restore(recovery::decode_checkpoint(bytes).value().snapshot), 1U);
  EXPECT_TRUE(after.updates.empty());
  second.advance();
  ASSERT_EQ(after.updates.size(), 1U);
  const Job& job = after.updates[0].second;
  EXPECT_EQ(after.updates[0].first, JobUpdate::settled);
  EXPECT_EQ(job.kind, JobKind::job);
  EXPECT_EQ(job.fun, "test.sleep");
  EXPECT_EQ(job.user, "root");
  EXPECT_EQ(job.succeeded, 1U);
  EXPECT_EQ(job.missing, 1U);  // expected - returned
  EXPECT_EQ(job.status(), correlator::JobStatus::missing);
  EXPECT_EQ(second.minions().name(job.minions[1]), "minion-b");
  EXPECT_EQ(job.flags[1] & correlator::kOutcomeMask, correlator::kMissing);

  // A return after that is late, as it would have been live.
  second.on_event(return_event(jid, "minion-b", kReturnedTrue, "test.sleep"));
  ASSERT_EQ(after.updates.size(), 2U);
  EXPECT_EQ(after.updates[1].first, JobUpdate::updated);
  EXPECT_EQ(after.updates[1].second.late, 1U);
}

TEST(CheckpointRestore, AJobAlreadySeenLiveIsKeptAndMinionIdsAreRemapped) {
  correlator::CorrelatorConfig config;
  ManualClock clock(1'795'980'269'000'000);
  Recorded r;
  correlator::Correlator first(config, clock, r.sink());
  first.on_event(ev("salt/job/20261201000000000002/new",
                    R"({"fun": "test.ping", "tgt": "*", "minions": ["minion-a", "minion-b"]})"));
  const correlator::CorrelatorSnapshot snap = first.snapshot();

  correlator::Correlator second(config, clock, r.sink());
  // The new correlator met other minions first: different ids, same names.
  second.on_event(ev("salt/minion/zeta/start", R"({"id": "zeta"})"));
  second.on_event(ev("salt/minion/minion-b/start", R"({"id": "minion-b"})"));
  EXPECT_EQ(second.restore(snap), 1U);
  EXPECT_EQ(second.restore(snap), 0U);  // already tracked: kept as it is
  second.on_event(ev("salt/job/20261201000000000002/ret/minion-a",
                     R"({"fun": "test.ping", "return": true, "retcode": 0, "id": "minion-a"})"));
  second.on_event(ev("salt/job/20261201000000000002/ret/minion-b",
                     R"({"fun": "test.ping", "return": true, "retcode": 0, "id": "minion-b"})"));
  ASSERT_EQ(r.updates.size(), 1U);
  EXPECT_EQ(r.updates[0].second.succeeded, 2U);
  EXPECT_EQ(second.stats().unexpected_returns, 0U);
}

// ---- the file ------------------------------------------------------------

TEST(CheckpointFile, WritesAtomicallyAndReadsBack) {
  const ScratchDir dir;
  recovery::CheckpointFile file(dir.path() / "correlator.checkpoint");
  EXPECT_FALSE(file.load());  // none yet: a first start, not an error
  ASSERT_TRUE(file.write(small_snapshot("1"), 5 * kMicrosPerSecond));
  EXPECT_FALSE(fs::exists(file.temp_path()));
  const auto back = file.load();
  ASSERT_TRUE(back);
  expect_same_job(back->jobs[0], small_snapshot("1").jobs[0]);
  EXPECT_EQ(file.stats().writes, 1U);
  EXPECT_EQ(file.stats().last_write_bytes, fs::file_size(file.path()));
  EXPECT_EQ(file.stats().last_write_at, 5 * kMicrosPerSecond);
  for (auto n : file.stats().restore_errors) EXPECT_EQ(n, 0U);
}

TEST(CheckpointFile, AFailedWriteLeavesTheOldCheckpoint) {
  const ScratchDir dir;
  recovery::CheckpointFile file(dir.path() / "correlator.checkpoint");
  ASSERT_TRUE(file.write(small_snapshot("old"), 1));
  const std::string old_bytes = read_bytes(file.path());
  fs::create_directory(file.temp_path());  // the temporary file cannot be created
  EXPECT_FALSE(file.write(small_snapshot("new"), 2));
  EXPECT_EQ(file.stats().write_failures, 1U);
  EXPECT_EQ(read_bytes(file.path()), old_bytes);
  const auto back = file.load();
  ASSERT_TRUE(back);
  EXPECT_EQ(back->jobs[0].jid, "old");
}

// Root writes anywhere: as root, this runs as user nobody.
TEST(CheckpointFile, ADirectoryThatCannotBeWrittenToKeepsTheOldCheckpoint) {
  testing::run_unprivileged([] {
    const ScratchDir dir;
    recovery::CheckpointFile file(dir.path() / "correlator.checkpoint");
    ASSERT_TRUE(file.write(small_snapshot("old"), 1));
    const std::string old_bytes = read_bytes(file.path());
    fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_FALSE(file.write(small_snapshot("new"), 2));
    EXPECT_EQ(file.stats().write_failures, 1U);
    EXPECT_EQ(read_bytes(file.path()), old_bytes);
    fs::permissions(dir.path(), fs::perms::owner_all);
  });
}

// Each bad file is counted under its reason, moved aside, and the start goes on empty.
TEST(CheckpointFile, ABadFileIsCountedMovedAsideAndIgnored) {
  const std::string good = recovery::encode_checkpoint(small_snapshot("1"), 1);
  std::string future = good;
  future[11] = 7;
  std::string flipped = good;
  flipped[good.size() - 3] ^= 0x40;
  const std::vector<std::pair<std::string, recovery::CheckpointError>> cases = {
      {"", recovery::CheckpointError::truncated},
      {good.substr(0, good.size() / 2), recovery::CheckpointError::truncated},
      {"not a checkpoint at all, but long enough", recovery::CheckpointError::bad_magic},
      {future, recovery::CheckpointError::unknown_version},
      {flipped, recovery::CheckpointError::bad_crc},
  };
  for (const auto& [bytes, reason] : cases) {
    const ScratchDir dir;
    recovery::CheckpointFile file(dir.path() / "correlator.checkpoint");
    write_bytes(file.path(), bytes);
    EXPECT_FALSE(file.load()) << to_string(reason);
    EXPECT_EQ(file.stats().restore_errors[static_cast<std::size_t>(reason)], 1U) << to_string(reason);
    EXPECT_FALSE(fs::exists(file.path())) << to_string(reason);
    EXPECT_EQ(read_bytes(file.aside_path()), bytes) << to_string(reason);
    // The next write starts afresh.
    EXPECT_TRUE(file.write(small_snapshot("2"), 2));
    EXPECT_TRUE(file.load());
  }
  // Unreadable: a directory where the file should be.
  const ScratchDir dir;
  recovery::CheckpointFile file(dir.path() / "correlator.checkpoint");
  fs::create_directory(file.path());
  EXPECT_FALSE(file.load());
  EXPECT_EQ(file.stats().restore_errors[static_cast<std::size_t>(recovery::CheckpointError::unreadable)], 1U);
}

TEST(CheckpointKeeper, WritesAfterTheIntervalWhenSomethingChangedAndAtShutdown) {
  const ScratchDir dir;
  testing::FakeSteadyTime time;
  ManualClock clock(1'795'980'269'000'000);
  correlator::Correlator c({}, clock, [](JobUpdate, const Job&) {});
  recovery::CheckpointKeeper keeper(dir.path() / "state" / "cp", std::chrono::seconds(10), c, clock, time);
  EXPECT_EQ(keeper.restore(), 0U);
  keeper.maybe_write();
  EXPECT_EQ(keeper.file().stats().writes, 0U);  // nothing changed, interval not passed
  c.on_event(ev("salt/job/20261201000000000003/new", R"({"fun": "test.ping", "tgt": "*", "minions": ["m"]})"));
  keeper.maybe_write();
  EXPECT_EQ(keeper.file().stats().writes, 0U);  // the interval has not passed
  time.advance(std::chrono::seconds(10));
  keeper.maybe_write();
  EXPECT_EQ(keeper.file().stats().writes, 1U);
  time.advance(std::chrono::seconds(10));
  keeper.maybe_write();
  EXPECT_EQ(keeper.file().stats().writes, 1U);  // nothing changed since
  keeper.write_at_shutdown();
  EXPECT_EQ(keeper.file().stats().writes, 2U);

  correlator::Correlator restarted({}, clock, [](JobUpdate, const Job&) {});
  recovery::CheckpointKeeper again(dir.path() / "state" / "cp", std::chrono::seconds(10), restarted, clock, time);
  EXPECT_EQ(again.restore(), 1U);
  EXPECT_EQ(restarted.tracked_jobs(), 1U);
  EXPECT_EQ(again.file().stats().restored_jobs, 1U);
}

// ---- the fuzz corpus -----------------------------------------------------

// The seeds of tests/fuzz/corpus/checkpoint, written by the real writer
// (write-checkpoint-seeds: testing::checkpoint_fuzz_seeds), are still in this
// build's format.
TEST(CheckpointSeeds, TheFuzzSeedsAreInTheWritersFormat) {
  const fs::path dir = fs::path(SALTTAP_SOURCE_DIR) / "tests/fuzz/corpus/checkpoint";
  for (const auto& [name, bytes] : testing::checkpoint_fuzz_seeds()) {
    const fs::path file = dir / name;
    ASSERT_TRUE(fs::exists(file)) << file << ": write the seeds with build/dev/tests/fuzz/write-checkpoint-seeds";
    // Not the bytes of this build's replay (a change to the correlator would
    // change them), but the format: a sound seed is exactly what the writer
    // writes for what it holds, a broken one is refused for its reason.
    const std::string saved = read_bytes(file);
    const auto d = recovery::decode_checkpoint(saved);
    if (name.starts_with("bad-")) {
      const auto fresh = recovery::decode_checkpoint(bytes);
      ASSERT_FALSE(d) << file;
      ASSERT_FALSE(fresh) << file;
      EXPECT_EQ(d.error().kind, fresh.error().kind) << file;
      continue;
    }
    ASSERT_TRUE(d) << file << ": " << d.error().why << "; the format changed: rewrite the seeds";
    EXPECT_EQ(recovery::encode_checkpoint(d.value().snapshot, d.value().written_at), saved) << file;
    EXPECT_FALSE(d.value().snapshot.size() == 0 && name != "empty") << file;
  }
}

// ---- config --------------------------------------------------------------

TEST(CheckpointConfig, KeysAreReadAndChecked) {
  const ScratchDir dir;
  const fs::path file = dir.path() / "salttap.yaml";
  write_bytes(file, "checkpoint:\n  enabled: false\n  path: /srv/cp\n  interval_seconds: 2.5\n");
  const config::Config c = config::load_config(file.string());
  EXPECT_FALSE(c.checkpoint.enabled);
  EXPECT_EQ(config::checkpoint_path(c), fs::path("/srv/cp"));
  EXPECT_EQ(c.checkpoint.interval, std::chrono::milliseconds(2500));

  config::Config d = config::default_config();
  EXPECT_TRUE(d.checkpoint.enabled);
  EXPECT_EQ(d.checkpoint.interval, std::chrono::seconds(10));
  d.indexer.spool.dir = "/var/lib/salttap/spool";
  EXPECT_EQ(config::checkpoint_path(d), fs::path("/var/lib/salttap/correlator.checkpoint"));
  d.indexer.spool.dir = "/var/lib/salttap/spool/";
  EXPECT_EQ(config::checkpoint_path(d), fs::path("/var/lib/salttap/correlator.checkpoint"));

  write_bytes(file, "checkpoint:\n  interval_seconds: 0\n");
  EXPECT_THROW(config::load_config(file.string()), ConfigError);
  write_bytes(file, "checkpoint:\n  every: 3\n");
  EXPECT_THROW(config::load_config(file.string()), ConfigError);
  write_bytes(file, "checkpoint:\n  enabled: maybe\n");
  EXPECT_THROW(config::load_config(file.string()), ConfigError);
}

}  // namespace
}  // namespace salttap
