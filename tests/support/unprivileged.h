#pragma once
// Runs part of a test as an unprivileged user. Root writes into a directory
// without write permission, so a check that salttap refuses such a directory
// cannot fail or pass as root (CI runs as root): there the part runs in a
// forked child that has dropped to user nobody, group nogroup, and no
// supplementary groups. Elsewhere it runs in place: the user already is
// unprivileged.

#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <functional>

namespace salttap::testing {

// `body` uses gtest's EXPECT_/ASSERT_ as usual. In the child its failures
// print as they happen and make the child exit 1, which fails the test here.
// The child creates what it needs itself: what the test made as root, in a
// directory of its own (mode 0700), is out of nobody's reach.
inline void run_unprivileged(const std::function<void()>& body) {
  if (::geteuid() != 0) {
    body();
    return;
  }
  // Looked up before the fork: the name service is no place for a forked child.
  const passwd* user = ::getpwnam("nobody");
  ASSERT_NE(user, nullptr) << "no user nobody";
  const uid_t uid = user->pw_uid;
  const group* grp = ::getgrnam("nogroup");
  ASSERT_NE(grp, nullptr) << "no group nogroup";
  const gid_t gid = grp->gr_gid;
  std::fflush(nullptr);  // nothing buffered before the fork is printed twice
  const pid_t child = ::fork();
  ASSERT_NE(child, -1) << "fork";
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0) {
      std::perror("dropping to nobody");
      std::_Exit(3);
    }
    int code = 0;
    try {
      body();
      code = ::testing::Test::HasFailure() ? 1 : 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "unprivileged part threw: %s\n", e.what());
      code = 2;
    }
    std::fflush(nullptr);
    std::_Exit(code);  // no exit handlers: the parent owns the test's state and its leak check
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the unprivileged part died (status " << status << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the unprivileged part failed (its failures are printed above)";
}

}  // namespace salttap::testing
