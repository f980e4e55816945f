// common/dir_lock.h against a real temporary directory: the lock holds the
// holder's pid, a second taker (in this process, or another one, forked) is
// refused with an error naming the holder and the lock file, the lock goes
// with its DirLock, and each failure to take it names the path and errno.

#include "common/dir_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>

#include "common/atomic_file.h"
#include "common/errno_text.h"
#include "tests/support/faulty_state_filesystem.h"
#include "tests/support/temp_dir.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;
using testing::FaultyStateFilesystem;
using testing::FsOp;

std::string contents(const fs::path& p) {
  auto r = AtomicFile(p).read();
  return r ? r.value() : std::string();
}

// Runs `child` in a forked process; its exit status (0..255), or -1.
template <typename F>
int in_child(F child) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(child());
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(DirLock, TakesTheLockAndRecordsThePid) {
  const testing::TempDir dir;
  auto lock = DirLock::take(dir.path());
  ASSERT_TRUE(lock) << lock.error().text("test");
  EXPECT_EQ(lock.value().path(), dir.path() / "lock");
  EXPECT_EQ(contents(dir.path() / "lock"), std::to_string(::getpid()) + "\n");
}

TEST(DirLock, ASecondTakerIsRefusedNamingTheHolder) {
  const testing::TempDir dir;
  auto first = DirLock::take(dir.path());
  ASSERT_TRUE(first);
  auto second = DirLock::take(dir.path());  // another open file: flock refuses it too
  ASSERT_FALSE(second);
  const DirLockError& e = second.error();
  EXPECT_EQ(e.kind, DirLockError::Kind::held);
  EXPECT_EQ(e.holder, std::to_string(::getpid()));
  EXPECT_EQ(e.text("spool"), "spool directory " + dir.path().string() + " is in use by another salttap (pid " +
                                 std::to_string(::getpid()) + " holds " + (dir.path() / "lock").string() + ")");
  EXPECT_EQ(contents(dir.path() / "lock"), std::to_string(::getpid()) + "\n") << "the holder's pid stays";
}

TEST(DirLock, AnotherProcessIsRefusedWhileHeldAndTakesItOnceReleased) {
  const testing::TempDir dir;
  std::optional<DirLock> held;
  {
    auto lock = DirLock::take(dir.path());
    ASSERT_TRUE(lock);
    held.emplace(std::move(lock).value());
  }
  const std::string parent = std::to_string(::getpid());
  // 0: refused as held by this process; 1: taken; 2: refused otherwise.
  const auto try_take = [&] {
    auto lock = DirLock::take(dir.path());
    if (lock) return 1;
    return lock.error().kind == DirLockError::Kind::held && lock.error().holder == parent ? 0 : 2;
  };
  EXPECT_EQ(in_child(try_take), 0);
  held.reset();
  EXPECT_EQ(in_child(try_take), 1);
  EXPECT_TRUE(DirLock::take(dir.path())) << "the child's lock went with it";
}

TEST(DirLock, AMovedLockIsStillHeldAndReleasedOnce) {
  const testing::TempDir dir;
  auto taken = DirLock::take(dir.path());
  ASSERT_TRUE(taken);
  DirLock moved = std::move(taken).value();
  EXPECT_FALSE(DirLock::take(dir.path()));
  { const DirLock last = std::move(moved); }
  EXPECT_TRUE(DirLock::take(dir.path()));
}

TEST(DirLock, EachFailureNamesTheLockFileAndTheErrno) {
  const testing::TempDir dir;
  FaultyStateFilesystem files;
  const std::string lock_path = (dir.path() / "lock").string();

  files.inject({.op = FsOp::open, .file = "lock", .error = EMFILE, .times = 1});
  auto r = DirLock::take(dir.path(), files);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, DirLockError::Kind::open);
  EXPECT_EQ(r.error().text("tap journal"), "cannot open tap journal lock " + lock_path + ": " + errno_text(EMFILE));

  files.inject({.op = FsOp::lock_exclusive, .file = "lock", .error = ENOLCK, .times = 1});
  r = DirLock::take(dir.path(), files);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, DirLockError::Kind::lock);
  EXPECT_EQ(r.error().text("spool"), "cannot lock " + lock_path + ": " + errno_text(ENOLCK));

  files.inject({.op = FsOp::write, .file = "lock", .error = ENOSPC, .times = 1});
  r = DirLock::take(dir.path(), files);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, DirLockError::Kind::record);
  EXPECT_EQ(r.error().text("spool"), "cannot write " + lock_path + ": " + errno_text(ENOSPC));
  EXPECT_TRUE(DirLock::take(dir.path(), files)) << "no failed attempt kept the lock";

  auto missing = DirLock::take(dir.path() / "absent");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().error, ENOENT);
}

}  // namespace
}  // namespace salttap
