#pragma once
// Job caches for tests: a private directory laid out as Salt's local_cache
// (<jobs>/<H[0:2]>/<H[2:]>/), jobs written from JSON as salt.payload would
// (msgpack; {"__bytes_b64__": ...} for bin), modification times set by
// hand, and a CacheFilesystem that fails where a rule says:
//
//   FaultyCacheFilesystem fs;
//   fs.fail(CacheOp::read, "/.load.p", EACCES);   every read of a path ending in /.load.p
//   fs.fail(CacheOp::open_dir, "/ab", EIO, 1);    the first listing of a path ending in /ab

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/clock.h"
#include "jobcache/cache_filesystem.h"
#include "jobcache/internal/job_dir.h"
#include "tap/event_from_json.h"
#include "tests/support/temp_dir.h"

namespace salttap::testing {

class CacheDir {
 public:
  CacheDir() { std::filesystem::create_directories(jobs()); }

  const std::filesystem::path& cachedir() const { return root_.path(); }
  std::filesystem::path jobs() const { return root_.path() / "jobs"; }

  // The job's directory (created), as Salt names it under sha256.
  std::filesystem::path job(const std::string& jid) const {
    const auto dir = jobcache::job_dir(jobs(), jid, "sha256");
    if (!dir) throw std::runtime_error("sha256 unknown");
    std::filesystem::create_directories(*dir);
    write_bytes(*dir / "jid", jid);
    return *dir;
  }

  // A publish job: .load.p and .minions.p.
  std::filesystem::path publish(const std::string& jid, const std::string& fun, const std::vector<std::string>& minions,
                                const std::string& arg_json = "[]") const {
    const auto dir = job(jid);
    write_json(dir / ".load.p", R"({"cmd": "publish", "tgt": "*", "fun": ")" + fun + R"(", "arg": )" + arg_json +
                                    R"(, "tgt_type": "glob", "ret": "", "jid": ")" + jid + R"(", "user": "root"})");
    std::string list = "[";
    for (const auto& m : minions) list += (list.size() > 1 ? ", \"" : "\"") + m + "\"";
    write_json(dir / ".minions.p", list + "]");
    return dir;
  }

  // <job>/<minion>/return.p: {return, retcode, success}, stored at `at`.
  std::filesystem::path ret(const std::filesystem::path& job_dir, const std::string& minion,
                            const std::string& return_json, int retcode, Micros at) const {
    std::filesystem::create_directories(job_dir / minion);
    const auto file = job_dir / minion / "return.p";
    write_json(file, R"({"return": )" + return_json + R"(, "retcode": )" + std::to_string(retcode) +
                         R"(, "success": )" + (retcode == 0 ? "true" : "false") + "}");
    set_mtime(file, at);
    return file;
  }

  static void write_bytes(const std::filesystem::path& file, const std::string& bytes) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  }
  static std::string msgpack(const std::string& json) {
    std::string error;
    auto bytes = tap::msgpack_from_json(json, &error);
    if (!bytes) throw std::runtime_error(error);
    return *bytes;
  }
  static void write_json(const std::filesystem::path& file, const std::string& json) {
    write_bytes(file, msgpack(json));
  }
  static void set_mtime(const std::filesystem::path& file, Micros at) {
    timespec times[2];
    times[0].tv_sec = times[1].tv_sec = static_cast<time_t>(at / kMicrosPerSecond);
    times[0].tv_nsec = times[1].tv_nsec = static_cast<long>(at % kMicrosPerSecond) * 1000;
    if (::utimensat(AT_FDCWD, file.c_str(), times, 0) != 0) throw std::runtime_error("utimensat " + file.string());
  }

 private:
  TempDir root_{"salttap-jobcache-test"};
};

enum class CacheOp { open_dir, list, stat, read };

// The real filesystem, but for the calls a rule makes fail.
class FaultyCacheFilesystem final : public jobcache::CacheFilesystem {
 public:
  using jobcache::CacheFilesystem::read_file;
  // Calls `op` on a path ending in `suffix` fail with `error`: the first
  // `times` of them (0: every one).
  void fail(CacheOp op, std::string suffix, int error, unsigned times = 0) {
    rules_.push_back({op, std::move(suffix), error, times, 0});
  }
  void clear() { rules_.clear(); }
  unsigned calls(CacheOp op, const std::string& suffix) const {
    const auto it = calls_.find({op, suffix});
    return it == calls_.end() ? 0 : it->second;
  }

  std::unique_ptr<jobcache::DirStream> open_dir(const std::filesystem::path& dir, int& error) override {
    if ((error = fault(CacheOp::open_dir, dir)) != 0) return nullptr;
    auto inner = real().open_dir(dir, error);
    if (!inner) return nullptr;
    return std::make_unique<Stream>(std::move(inner), *this, dir);
  }
  int stat(const std::filesystem::path& path, jobcache::CacheStat& out) override {
    if (const int e = fault(CacheOp::stat, path)) return e;
    return real().stat(path, out);
  }
  int read_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string& out, Micros* mtime) override {
    if (const int e = fault(CacheOp::read, path)) return e;
    return real().read_file(path, max_bytes, out, mtime);
  }

 private:
  struct Rule {
    CacheOp op;
    std::string suffix;
    int error;
    unsigned times, used;
  };
  class Stream final : public jobcache::DirStream {
   public:
    Stream(std::unique_ptr<jobcache::DirStream> inner, FaultyCacheFilesystem& fs, std::filesystem::path dir)
        : inner_(std::move(inner)), fs_(fs), dir_(std::move(dir)) {}
    bool next(std::string& name, bool& is_dir, int& error) override {
      if ((error = fs_.fault(CacheOp::list, dir_)) != 0) return false;
      return inner_->next(name, is_dir, error);
    }

   private:
    std::unique_ptr<jobcache::DirStream> inner_;
    FaultyCacheFilesystem& fs_;
    std::filesystem::path dir_;
  };

  static jobcache::CacheFilesystem& real() { return jobcache::posix_cache_filesystem(); }

  int fault(CacheOp op, const std::filesystem::path& path) {
    const std::string p = path.string();
    for (Rule& r : rules_) {
      if (r.op != op || !p.ends_with(r.suffix)) continue;
      ++calls_[{op, r.suffix}];
      if (r.times != 0 && r.used >= r.times) continue;
      ++r.used;
      return r.error;
    }
    return 0;
  }

  std::vector<Rule> rules_;
  std::map<std::pair<CacheOp, std::string>, unsigned> calls_;
};

}  // namespace salttap::testing
