#include "common/access_advice.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/errno_text.h"

namespace salttap {
namespace {

std::string user_name(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return std::to_string(uid);
}

std::string group_name(gid_t gid) {
  if (const group* gr = ::getgrgid(gid)) return gr->gr_name;
  return std::to_string(gid);
}

}  // namespace

int stat_owner(const std::filesystem::path& path, PathOwner& out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno;
  out = {st.st_uid, st.st_gid, st.st_mode};
  return 0;
}

std::string access_advice(const std::filesystem::path& path, int error, const std::string& wanted, Access access,
                          const OwnerLookup& lookup) {
  std::string text = fmt::format("cannot {} {}: {}", wanted, path.string(), errno_text(error));
  if (error != EACCES && error != EPERM) return text;
  // The path itself refuses, or a parent salttap may not search: name the
  // first one that does, since that is the one to change.
  std::filesystem::path shut = path;
  PathOwner owner;
  int e = lookup(shut, owner);
  while (e == EACCES && shut.has_parent_path() && shut.parent_path() != shut) {
    shut = shut.parent_path();
    e = lookup(shut, owner);
  }
  const std::string me = user_name(::geteuid());
  if (e != 0) return text + fmt::format(" (salttap runs as user {})", me);
  const std::string user = user_name(owner.uid);
  const std::string group = group_name(owner.gid);
  const bool tree = access == Access::read_tree;
  const char* recursive = tree ? "-R " : "";
  const char* perms = tree ? "rX" : "rwX";
  // Root's group is no group to join: then an ACL for salttap's user.
  const std::string change =
      owner.gid == 0 ? fmt::format("grant user {} {} with an ACL (setfacl {}-m u:{}:{} {})", me,
                                   tree ? "read access" : "access", recursive, me, perms, shut.string())
                     : fmt::format("add user {} to group {} (usermod -aG {} {}) and let the group {} (chmod {}g+{} {})",
                                   me, group, group, me, tree ? "read it" : "in", recursive, perms, shut.string());
  return text + fmt::format(
                    ". {} belongs to user {}, group {} (mode {:04o}) and salttap runs as user {}: {}, "
                    "or run salttap as user {}",
                    shut.string(), user, group, owner.mode & 07777, me, change, user);
}

std::optional<std::string> root_warning(uid_t euid) {
  if (euid != 0) return std::nullopt;
  return std::string(
      "salttap is running as root. It only reads the master's bus and job cache and writes its own spool: run it as "
      "its own user in the master's group (the package's unit runs as user salttap, group salt; see "
      "docs/install.md). A parser bug in a process that reads every minion's returns should not hold root.");
}

}  // namespace salttap
