#pragma once
// A StateFilesystem for tests that does the real thing (over a temporary
// directory) except where a rule says a call fails:
//
//   files.inject({.op = FsOp::write, .file = "seg-", .error = ENOSPC, .after = 2});
//       the third write to a segment file, and every one after it, fails with ENOSPC
//   files.inject({.op = FsOp::write, .file = "seg-", .error = ENOSPC, .short_write = 100});
//       a write to a segment writes 100 bytes (a short write); the next write to
//       that file fails with ENOSPC
//   files.inject({.op = FsOp::sync_data, .file = "seg-", .times = 1});   one fdatasync fails with EIO
//   files.inject({.op = FsOp::rename, .file = "ledger.tmp"});             the ledger is never renamed into place
//   files.clear_faults();                                                 space came back
//
// A rule matches a call by operation and by the file name (the last path
// component; for a descriptor, the name it was opened under) starting with
// `file`. Calls are counted, so a test can also check what was done.

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/state_filesystem.h"

namespace salttap::testing {

enum class FsOp {
  kind_of,
  create_directories,
  check_writable,
  list_directory,
  rename,
  remove,
  open,
  close,
  lock_exclusive,
  file_size,
  read_at,
  write,
  truncate,
  sync_data,
  sync,
};

struct FsFault {
  static constexpr std::uint64_t kForever = std::numeric_limits<std::uint64_t>::max();
  FsOp op = FsOp::write;
  std::string file;  // the file name starts with this ("" matches every file)
  int error = EIO;
  std::uint64_t after = 0;         // matching calls that succeed before the first failure
  std::uint64_t times = kForever;  // failures, then the rule is spent
  // write only: the failing call writes this many bytes for real and reports
  // them (a short write); the next write to that file fails with `error`.
  std::size_t short_write = 0;
};

class FaultyStateFilesystem final : public StateFilesystem {
 public:
  using StateFilesystem::open;
  explicit FaultyStateFilesystem(StateFilesystem& real = posix_state_filesystem()) : real_(real) {}

  void inject(FsFault fault) {
    std::lock_guard lock(mu_);
    rules_.push_back(Rule{std::move(fault), 0, 0});
  }
  // Every rule and pending short-write failure goes: the disk works again.
  void clear_faults() {
    std::lock_guard lock(mu_);
    rules_.clear();
    fail_next_write_.clear();
  }
  // Calls of `op` on files whose name starts with `file`, failed or not.
  std::uint64_t calls(FsOp op, std::string_view file = {}) const {
    std::lock_guard lock(mu_);
    std::uint64_t n = 0;
    for (const auto& c : log_)
      if (c.op == op && c.name.starts_with(file)) ++n;
    return n;
  }
  // Calls a rule made fail.
  std::uint64_t failures() const {
    std::lock_guard lock(mu_);
    return failures_;
  }

  int kind_of(const Path& p, FileKind& kind) override {
    if (const int e = fault(FsOp::kind_of, name_of(p))) return e;
    return real_.kind_of(p, kind);
  }
  int create_directories(const Path& dir) override {
    if (const int e = fault(FsOp::create_directories, name_of(dir))) return e;
    return real_.create_directories(dir);
  }
  int check_writable(const Path& dir) override {
    if (const int e = fault(FsOp::check_writable, name_of(dir))) return e;
    return real_.check_writable(dir);
  }
  int list_directory(const Path& dir, std::vector<DirectoryEntry>& entries) override {
    if (const int e = fault(FsOp::list_directory, name_of(dir))) return e;
    return real_.list_directory(dir, entries);
  }
  int rename(const Path& from, const Path& to) override {
    if (const int e = fault(FsOp::rename, name_of(from))) return e;
    return real_.rename(from, to);
  }
  int remove(const Path& p) override {
    if (const int e = fault(FsOp::remove, name_of(p))) return e;
    return real_.remove(p);
  }
  int open(const Path& p, int flags, int& fd, unsigned mode) override {
    if (const int e = fault(FsOp::open, name_of(p))) return e;
    const int e = real_.open(p, flags, fd, mode);
    if (e == 0) {
      std::lock_guard lock(mu_);
      names_[fd] = name_of(p);
    }
    return e;
  }
  int close(int fd) override {
    {
      std::lock_guard lock(mu_);
      fail_next_write_.erase(fd);
      names_.erase(fd);
    }
    return real_.close(fd);
  }
  int lock_exclusive(int fd) override {
    if (const int e = fault(FsOp::lock_exclusive, name_of(fd))) return e;
    return real_.lock_exclusive(fd);
  }
  int file_size(int fd, std::uint64_t& size) override {
    if (const int e = fault(FsOp::file_size, name_of(fd))) return e;
    return real_.file_size(fd, size);
  }
  int read_at(int fd, std::uint64_t offset, std::span<unsigned char> out, std::size_t& n) override {
    if (const int e = fault(FsOp::read_at, name_of(fd))) return e;
    return real_.read_at(fd, offset, out, n);
  }
  int write(int fd, std::span<const char> data, std::size_t& written) override {
    std::size_t short_write = 0;
    {
      std::lock_guard lock(mu_);
      const std::string name = names_.count(fd) ? names_[fd] : std::string();
      log_.push_back(Call{FsOp::write, name});
      if (const auto pending = fail_next_write_.find(fd); pending != fail_next_write_.end()) {
        const int e = pending->second;
        fail_next_write_.erase(pending);
        ++failures_;
        written = 0;
        return e;
      }
      if (Rule* rule = match(FsOp::write, name)) {
        if (rule->fault.short_write == 0 || rule->fault.short_write >= data.size()) {
          ++failures_;
          written = 0;
          return rule->fault.error;
        }
        short_write = rule->fault.short_write;
        fail_next_write_[fd] = rule->fault.error;
      }
    }
    if (short_write > 0) return real_.write(fd, data.first(short_write), written);
    return real_.write(fd, data, written);
  }
  int truncate(int fd, std::uint64_t size) override {
    if (const int e = fault(FsOp::truncate, name_of(fd))) return e;
    return real_.truncate(fd, size);
  }
  int sync_data(int fd) override {
    if (const int e = fault(FsOp::sync_data, name_of(fd))) return e;
    return real_.sync_data(fd);
  }
  int sync(int fd) override {
    if (const int e = fault(FsOp::sync, name_of(fd))) return e;
    return real_.sync(fd);
  }

 private:
  struct Rule {
    FsFault fault;
    std::uint64_t seen = 0;    // matching calls so far
    std::uint64_t failed = 0;  // of which made to fail
  };
  struct Call {
    FsOp op;
    std::string name;
  };

  static std::string name_of(const Path& p) {
    // "dir/" names "dir" (create_directories may be given a trailing slash).
    return p.has_filename() ? p.filename().string() : p.parent_path().filename().string();
  }
  std::string name_of(int fd) const {
    std::lock_guard lock(mu_);
    const auto it = names_.find(fd);
    return it == names_.end() ? std::string() : it->second;
  }

  // The rule that makes this call fail, if any (mu_ held).
  Rule* match(FsOp op, const std::string& name) {
    for (Rule& rule : rules_) {
      if (rule.fault.op != op || !name.starts_with(rule.fault.file)) continue;
      if (rule.seen++ < rule.fault.after || rule.failed >= rule.fault.times) continue;
      ++rule.failed;
      return &rule;
    }
    return nullptr;
  }

  // 0, or the errno a rule makes this call fail with; logs the call.
  int fault(FsOp op, const std::string& name) {
    std::lock_guard lock(mu_);
    log_.push_back(Call{op, name});
    Rule* rule = match(op, name);
    if (rule == nullptr) return 0;
    ++failures_;
    return rule->fault.error;
  }

  StateFilesystem& real_;
  mutable std::mutex mu_;
  std::vector<Rule> rules_;
  std::map<int, std::string> names_;    // open descriptors and the file names they were opened under
  std::map<int, int> fail_next_write_;  // descriptor -> errno, after a short write
  std::vector<Call> log_;
  std::uint64_t failures_ = 0;
};

}  // namespace salttap::testing
