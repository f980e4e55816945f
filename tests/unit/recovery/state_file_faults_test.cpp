// The checkpoint (recovery/checkpoint_file.h) and the reconcile record
// (recovery/reconcile_state.h) when the disk fails, made by
// FaultyStateFilesystem over a real temporary directory: ENOSPC on write, EIO
// from fdatasync, a refused rename, a torn write (a short write, then no
// space), and a crash between write and rename. Each time the write reports
// the step, the path and the errno as a value, the previous good file is what
// the next start reads, no temporary file is left or read, and the next
// successful write takes over. The callers' side (logged, counted, the run
// goes on) is in CheckpointKeeperFaults here and in reconciler_test.cpp.

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "common/errno_text.h"
#include "correlator/correlator.h"
#include "recovery/checkpoint_file.h"
#include "recovery/checkpoint_keeper.h"
#include "recovery/reconcile_state.h"
#include "tests/support/checkpoint_seeds.h"
#include "tests/support/events.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/faulty_state_filesystem.h"
#include "tests/support/temp_dir.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;
using testing::FaultyStateFilesystem;
using testing::FsOp;

// The two state files behind one face: write version `v`, read back which
// version is on disk (nothing: none, or a bad file).
struct CheckpointSubject {
  static constexpr const char* kName = "correlator.checkpoint";
  recovery::CheckpointFile file;
  CheckpointSubject(const fs::path& path, StateFilesystem& files) : file(path, files) {}
  Result<void, FileError> write(int v) { return file.write(testing::small_snapshot(std::to_string(v)), v); }
  std::optional<int> load() {
    const auto snapshot = file.load();
    if (!snapshot) return std::nullopt;
    return std::stoi(snapshot->jobs.at(0).jid);
  }
};

struct ReconcileSubject {
  static constexpr const char* kName = "reconcile.state";
  recovery::ReconcileStateFile file;
  ReconcileSubject(const fs::path& path, StateFilesystem& files) : file(path, files) {}
  Result<void, FileError> write(int v) { return file.write({v, std::nullopt, {"j" + std::to_string(v)}, false}); }
  std::optional<int> load() {
    recovery::ReconcileState s;
    std::string error;
    if (file.read(s, error) != recovery::ReconcileStateFile::Read::found) return std::nullopt;
    return static_cast<int>(s.live_until);
  }
};

template <typename Subject>
class StateFileFaults : public ::testing::Test {
 protected:
  StateFileFaults() { fs::create_directory(tmp_.path() / "state"); }
  fs::path path() const { return tmp_.path() / "state" / Subject::kName; }
  fs::path temp() const { return path().string() + ".tmp"; }
  // What a new start (real filesystem, a new object) reads.
  std::optional<int> next_start_reads() { return Subject(path(), posix_state_filesystem()).load(); }

  // Version 1 is written; `fault` makes writing version 2 fail with
  // `error` at `step`; version 1 stays; once the fault is gone, 3 is written.
  void expect_write_fails_and_recovers(const testing::FsFault& fault, std::string_view step) {
    ASSERT_TRUE(subject_.write(1));
    files_.inject(fault);
    const auto failed = subject_.write(2);
    ASSERT_FALSE(failed) << step;
    EXPECT_EQ(failed.error().error, fault.error);
    EXPECT_EQ(failed.error().step, step);
    EXPECT_EQ(failed.error().path, temp());
    const std::string text = failed.error().text();
    EXPECT_NE(text.find(temp().string()), std::string::npos) << text;
    EXPECT_NE(text.find(errno_text(fault.error)), std::string::npos) << text;
    EXPECT_FALSE(fs::exists(temp())) << "no temporary file is left";
    EXPECT_EQ(next_start_reads(), 1) << "the previous good file";

    files_.clear_faults();
    ASSERT_TRUE(subject_.write(3));
    EXPECT_EQ(next_start_reads(), 3);
    EXPECT_EQ(subject_.load(), 3);
  }

  testing::TempDir tmp_;
  FaultyStateFilesystem files_;
  Subject subject_{path(), files_};
};

using Subjects = ::testing::Types<CheckpointSubject, ReconcileSubject>;
TYPED_TEST_SUITE(StateFileFaults, Subjects);

TYPED_TEST(StateFileFaults, NoSpaceOnWrite) {
  this->expect_write_fails_and_recovers({.op = FsOp::write, .file = TypeParam::kName, .error = ENOSPC}, "write");
}

TYPED_TEST(StateFileFaults, EioFromFdatasync) {
  this->expect_write_fails_and_recovers({.op = FsOp::sync_data, .file = TypeParam::kName, .error = EIO}, "fdatasync");
}

TYPED_TEST(StateFileFaults, ARefusedRename) {
  this->expect_write_fails_and_recovers({.op = FsOp::rename, .file = TypeParam::kName, .error = EXDEV}, "rename");
}

TYPED_TEST(StateFileFaults, AShortWriteThenNoSpace) {
  this->expect_write_fails_and_recovers(
      {.op = FsOp::write, .file = TypeParam::kName, .error = ENOSPC, .short_write = 7}, "write");
  EXPECT_GE(this->files_.calls(FsOp::write, TypeParam::kName), 4u) << "the short write was made, then refused";
}

// A crash after the write and before the rename: the next start reads the
// previous file, removes the partial temporary one, and writes over it.
TYPED_TEST(StateFileFaults, ACrashBeforeTheRenameLeavesThePreviousFile) {
  ASSERT_TRUE(this->subject_.write(1));
  this->files_.inject({.op = FsOp::remove, .file = TypeParam::kName, .error = EIO, .times = 1});  // "crashed"
  this->files_.inject({.op = FsOp::write, .file = TypeParam::kName, .error = EIO, .times = 1, .short_write = 5});
  ASSERT_FALSE(this->subject_.write(2));
  ASSERT_TRUE(fs::exists(this->temp())) << "the torn temporary file is on disk";
  EXPECT_EQ(fs::file_size(this->temp()), 5u);

  EXPECT_EQ(this->next_start_reads(), 1);
  EXPECT_FALSE(fs::exists(this->temp())) << "the start removed it";
  this->files_.clear_faults();
  ASSERT_TRUE(this->subject_.write(3));
  EXPECT_EQ(this->next_start_reads(), 3);
}

TYPED_TEST(StateFileFaults, AFailedDirectorySyncComesAfterTheRename) {
  ASSERT_TRUE(this->subject_.write(1));
  this->files_.inject({.op = FsOp::sync, .file = "state", .error = EIO, .times = 1});
  const auto failed = this->subject_.write(2);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().step, "fsync (directory)");
  EXPECT_EQ(this->next_start_reads(), 2) << "renamed: the new file, whole";
  EXPECT_TRUE(this->subject_.write(3));
}

TEST(CheckpointFileFaults, FailuresAreCountedAndTheFileStaysPrivate) {
  testing::TempDir tmp;
  FaultyStateFilesystem files;
  recovery::CheckpointFile file(tmp.path() / "cp", files);
  files.inject({.op = FsOp::write, .file = "cp", .error = ENOSPC, .times = 2});
  EXPECT_FALSE(file.write(testing::small_snapshot("1"), 1));
  EXPECT_FALSE(file.write(testing::small_snapshot("1"), 1));
  ASSERT_TRUE(file.write(testing::small_snapshot("1"), 1));
  EXPECT_EQ(file.stats().write_failures, 2u);
  EXPECT_EQ(file.stats().writes, 1u);
  EXPECT_EQ(fs::status(file.path()).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
}

// The keeper, the checkpoint's caller: a failed write is logged (path and
// errno) and counted, the run goes on with the previous checkpoint on disk,
// and the next interval writes again.
TEST(CheckpointKeeperFaults, AFailedWriteIsLoggedCountedAndRetriedAtTheNextInterval) {
  testing::TempDir tmp;
  FaultyStateFilesystem files;
  testing::FakeSteadyTime time;
  ManualClock clock(1'795'980'269'000'000);
  correlator::Correlator c({}, clock, [](correlator::JobUpdate, const correlator::Job&) {});
  const fs::path path = tmp.path() / "state" / "cp";
  recovery::CheckpointKeeper keeper(path, std::chrono::seconds(10), c, clock, time, files);
  const auto job = [&](const char* jid) {
    c.on_event(
        testing::ev(std::string("salt/job/") + jid + "/new", R"({"fun": "test.ping", "tgt": "*", "minions": ["m"]})"));
    time.advance(std::chrono::seconds(10));
  };
  job("20261201000000000001");
  keeper.maybe_write();
  ASSERT_EQ(keeper.file().stats().writes, 1u);

  files.inject({.op = FsOp::sync_data, .file = "cp", .error = EIO});
  job("20261201000000000002");
  ::testing::internal::CaptureStderr();
  keeper.maybe_write();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("WARN"), std::string::npos) << log;
  EXPECT_NE(log.find(path.string()), std::string::npos) << log;
  EXPECT_NE(log.find(errno_text(EIO)), std::string::npos) << log;
  EXPECT_EQ(keeper.file().stats().write_failures, 1u);
  const auto on_disk = recovery::CheckpointFile(path).load();
  ASSERT_TRUE(on_disk);
  EXPECT_EQ(on_disk->jobs.size(), 1u) << "the previous checkpoint";

  files.clear_faults();
  keeper.maybe_write();
  EXPECT_EQ(keeper.file().stats().writes, 1u) << "not before the interval";
  time.advance(std::chrono::seconds(10));
  ::testing::internal::CaptureStderr();
  keeper.maybe_write();
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("written again after 1 failures"), std::string::npos);
  EXPECT_EQ(keeper.file().stats().writes, 2u);
  const auto after = recovery::CheckpointFile(path).load();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->jobs.size(), 2u);
}

}  // namespace
}  // namespace salttap
