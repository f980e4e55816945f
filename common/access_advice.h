#pragma once
// What to tell an operator when salttap may not open a path it needs (the
// master's bus socket and job cache, the spool directory): who owns the path
// that shuts it, who salttap runs as, and what to change. Salt 3006+ packages
// run the master as user `salt`, so the usual fix is a group, not root.
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace salttap {

struct PathOwner {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;
};

// 0, or the errno of a failed stat. The seam lets the job cache's tests
// describe paths through their fake filesystem.
using OwnerLookup = std::function<int(const std::filesystem::path&, PathOwner&)>;
int stat_owner(const std::filesystem::path& path, PathOwner& out);

enum class Access {
  write,      // a socket to connect to, a directory to write in
  read_tree,  // a directory tree to read (the job cache)
};

// "cannot <wanted> <path>: <strerror>" and, for EACCES/EPERM, the owner,
// group and mode of the nearest path that refuses salttap (the path, or the
// first parent it cannot search) and the change to make.
[[nodiscard]] std::string access_advice(const std::filesystem::path& path, int error, const std::string& wanted,
                                        Access access = Access::write, const OwnerLookup& lookup = stat_owner);

// The loud warning `run` logs when it runs as root; nothing when it does not.
// salttap only reads the bus and the job cache: root is never needed, only a
// group (see docs/install.md).
[[nodiscard]] std::optional<std::string> root_warning(uid_t euid);

}  // namespace salttap
