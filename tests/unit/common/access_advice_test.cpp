// access_advice and root_warning: the words an operator reads when salttap
// may not open a path. Real paths under a temporary directory; the tests run
// as any user (the advice describes the path, whoever asks).
#include "common/access_advice.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include <gtest/gtest.h>

#include "tests/support/fake_publisher.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;

TEST(AccessAdvice, PermissionDeniedNamesThePathItsOwnerModeAndTheChange) {
  testing::TempDir tmp;
  const fs::path dir = tmp.path() / "spool";
  fs::create_directory(dir);
  ::chmod(dir.c_str(), 0750);
  const std::string text = access_advice(dir, EACCES, "write to the spool directory");
  EXPECT_NE(text.find("cannot write to the spool directory " + dir.string() + ": Permission denied"), std::string::npos)
      << text;
  EXPECT_NE(text.find("(mode 0750)"), std::string::npos) << text;
  EXPECT_NE(text.find("salttap runs as user"), std::string::npos) << text;
  EXPECT_NE(text.find("or run salttap as user"), std::string::npos) << text;
}

TEST(AccessAdvice, OtherErrorsAreTheErrorAlone) {
  const std::string text = access_advice("/nowhere/bus.ipc", ENOENT, "connect to the master's bus at");
  EXPECT_EQ(text, "cannot connect to the master's bus at /nowhere/bus.ipc: No such file or directory");
}

TEST(RootWarning, OnlyForRoot) {
  ASSERT_TRUE(root_warning(0).has_value());
  EXPECT_NE(root_warning(0)->find("running as root"), std::string::npos);
  EXPECT_FALSE(root_warning(1000).has_value());
}

}  // namespace
}  // namespace salttap
