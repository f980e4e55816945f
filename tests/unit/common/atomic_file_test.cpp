// common/atomic_file.h against a real temporary directory: a replace is
// whole or not at all, whichever step fails (FaultyStateFilesystem makes it
// fail), the error names the step, the path and the errno, no temporary file
// is left behind, and read() tells an absent or oversized file apart.

#include "common/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "common/errno_text.h"
#include "tests/support/faulty_state_filesystem.h"
#include "tests/support/temp_dir.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;
using testing::FaultyStateFilesystem;
using testing::FsOp;

class AtomicFileTest : public ::testing::Test {
 protected:
  AtomicFileTest() { fs::create_directory(dir()); }
  fs::path dir() const { return tmp_.path() / "state"; }
  fs::path path() const { return dir() / "file"; }
  std::string on_disk() const {
    auto back = AtomicFile(path()).read();
    return back ? back.value() : "<" + back.error().text() + ">";
  }

  testing::TempDir tmp_;
  FaultyStateFilesystem files_;
};

TEST_F(AtomicFileTest, ReplacesTheWholeFileAndReadsItBack) {
  AtomicFile file(path(), files_);
  ASSERT_TRUE(file.replace("first"));
  EXPECT_EQ(on_disk(), "first");
  ASSERT_TRUE(file.replace("second, longer"));
  ASSERT_TRUE(file.replace("third"));
  EXPECT_EQ(on_disk(), "third") << "the old content is gone, not overwritten in place";
  EXPECT_FALSE(fs::exists(file.temp_path()));
  EXPECT_EQ(file.temp_path(), dir() / "file.tmp");
  // Synced: the data before the rename, the directory after it.
  EXPECT_EQ(files_.calls(FsOp::sync_data, "file.tmp"), 3u);
  EXPECT_EQ(files_.calls(FsOp::sync, "state"), 3u);
}

TEST_F(AtomicFileTest, WithoutSyncNothingIsSynced) {
  AtomicFile file(path(), files_, {.sync = false});
  ASSERT_TRUE(file.replace("x"));
  EXPECT_EQ(on_disk(), "x");
  EXPECT_EQ(files_.calls(FsOp::sync_data), 0u);
  EXPECT_EQ(files_.calls(FsOp::sync), 0u);
}

TEST_F(AtomicFileTest, TheFileGetsTheModeAsked) {
  ASSERT_TRUE(AtomicFile(path(), files_, {.mode = 0600}).replace("secret"));
  struct stat st {};
  ASSERT_EQ(::stat(path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// Each step that can fail before the rename: the file before stays, the
// temporary file goes, and the next replace works.
TEST_F(AtomicFileTest, AFailedStepLeavesThePreviousFileWhole) {
  struct Case {
    FsOp op;
    int error;
    std::string_view step;
  };
  for (const Case c : {Case{FsOp::open, EACCES, "open"}, Case{FsOp::write, ENOSPC, "write"},
                       Case{FsOp::sync_data, EIO, "fdatasync"}, Case{FsOp::rename, EIO, "rename"}}) {
    AtomicFile file(path(), files_);
    ASSERT_TRUE(file.replace("good"));
    files_.inject({.op = c.op, .file = "file.tmp", .error = c.error});
    const auto failed = file.replace("lost");
    ASSERT_FALSE(failed) << c.step;
    EXPECT_EQ(failed.error().error, c.error);
    EXPECT_EQ(failed.error().step, c.step);
    EXPECT_EQ(failed.error().path, file.temp_path());
    EXPECT_EQ(failed.error().text(),
              std::string(c.step) + " " + file.temp_path().string() + ": " + errno_text(c.error));
    EXPECT_EQ(on_disk(), "good") << c.step;
    EXPECT_FALSE(fs::exists(file.temp_path())) << c.step;
    files_.clear_faults();
    ASSERT_TRUE(file.replace("again")) << c.step;
    EXPECT_EQ(on_disk(), "again") << c.step;
  }
}

TEST_F(AtomicFileTest, AShortWriteThenNoSpaceIsATornTempNeverTheFile) {
  AtomicFile file(path(), files_);
  ASSERT_TRUE(file.replace("the previous content"));
  files_.inject({.op = FsOp::write, .file = "file.tmp", .error = ENOSPC, .short_write = 4});
  const auto failed = file.replace("the next content, longer");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().error, ENOSPC);
  EXPECT_EQ(failed.error().step, "write");
  EXPECT_EQ(files_.calls(FsOp::write, "file.tmp"), 3u) << "the first replace's, the short one, the refused one";
  EXPECT_EQ(files_.calls(FsOp::rename), 1u) << "only the first replace renamed";
  EXPECT_EQ(on_disk(), "the previous content");
  EXPECT_FALSE(fs::exists(file.temp_path()));
}

// After the rename the new content is in place; a failed directory sync only
// means it may not survive a power cut, and says so.
TEST_F(AtomicFileTest, AFailedDirectorySyncIsReportedAfterTheRename) {
  AtomicFile file(path(), files_);
  files_.inject({.op = FsOp::sync, .file = "state", .error = EIO, .times = 1});
  const auto failed = file.replace("new");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().step, "fsync (directory)");
  EXPECT_EQ(failed.error().path, dir());
  EXPECT_EQ(on_disk(), "new");
  EXPECT_TRUE(file.replace("newer"));
}

TEST_F(AtomicFileTest, ReadTellsAbsentAndTooLargeApart) {
  AtomicFile file(path(), files_);
  auto absent = file.read();
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().error, ENOENT);
  EXPECT_EQ(absent.error().step, "open");

  const std::string big(200'000, 'b');  // several read windows
  ASSERT_TRUE(file.replace(big));
  auto whole = file.read();
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole.value(), big);
  auto exact = file.read(big.size());
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact.value().size(), big.size());
  auto over = file.read(big.size() - 1);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().error, EFBIG);

  ASSERT_TRUE(file.replace(""));
  auto empty = file.read(0);
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty.value(), "");

  files_.inject({.op = FsOp::read_at, .file = "file", .error = EIO});
  auto unreadable = file.read();
  ASSERT_FALSE(unreadable);
  EXPECT_EQ(unreadable.error().error, EIO);
  EXPECT_EQ(unreadable.error().step, "read");
}

// A crash between write and rename leaves a partial temporary file: read()
// never sees it, remove_leftover_temp() clears it.
TEST_F(AtomicFileTest, ALeftoverTempIsIgnoredAndRemoved) {
  AtomicFile file(path(), files_);
  ASSERT_TRUE(file.replace("whole"));
  ASSERT_TRUE(AtomicFile(file.temp_path(), files_, {.sync = false}).replace("part"));  // the crash's leftover
  EXPECT_EQ(on_disk(), "whole");
  EXPECT_TRUE(file.remove_leftover_temp());
  EXPECT_FALSE(fs::exists(file.temp_path()));
  EXPECT_FALSE(file.remove_leftover_temp());
  EXPECT_EQ(on_disk(), "whole");
}

}  // namespace
}  // namespace salttap
