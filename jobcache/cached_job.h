#pragma once
// CachedJob: one job of the master's job cache, read far enough to know
// what it is (its load, its expected minions, which minions returned and
// when), and able to hand out the very events a bus subscriber would have
// seen for it, one at a time (docs/backfill.md):
//
//   publish        salt/job/<jid>/new from .load.p and .minions.p (+ the
//                  syndics' .minions.<id>.p), then salt/job/<jid>/ret/<minion>
//                  per <minion>/return.p ({return, retcode, success}, or the
//                  bare value before 2018.3), with out.p's outputter
//   runner, wheel  salt/run|wheel/<jid>/new and /ret from the load's
//                  `return` (the master's own return event)
//   minion_return  a return that came in as jid "req" (a minion schedule,
//                  salt-call): its load is the return event; no `new`
//
// The bus `_stamp` of a return is lost: the return.p file's modification time
// stands in for it (the master writes the file right after firing the
// event); a `new` is stamped with the jid's time. Return files are read and
// decoded when their event is asked for, so a job never holds more than one
// return in memory.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include "common/clock.h"
#include "jobcache/cache_filesystem.h"
#include "tap/body_decoder.h"
#include "tap/decode_limits.h"
#include "tap/event.h"

namespace salttap::jobcache {

enum class JobShape : std::uint8_t { publish, runner, wheel, minion_return };
std::string_view to_string(JobShape s);

struct CachedReturn {
  std::string minion;
  Micros mtime = 0;  // of return.p: when the master stored it
};

class CachedJob {
 public:
  CachedJob(std::filesystem::path dir, CacheFilesystem& fs, const tap::DecodeLimits& limits)
      : dir_(std::move(dir)), fs_(fs), limits_(limits), decoder_(limits) {}
  CachedJob(const CachedJob&) = delete;
  CachedJob& operator=(const CachedJob&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const std::string& jid() const { return jid_; }
  JobShape shape() const { return shape_; }
  const std::string& fun() const { return fun_; }  // comma-joined for multi-function jobs
  // The jid's time (the master's clock at publish); the `jid` file's
  // modification time for a jid that carries none.
  Micros started_at() const { return started_at_; }
  const std::vector<std::string>& expected() const { return expected_; }  // sorted, unique
  const std::vector<CachedReturn>& returns() const { return returns_; }   // by mtime, then minion
  std::size_t pending_return_dirs() const { return pending_dirs_; }       // a minion directory, no return.p
  // The cache holds the job's whole story: every expected minion returned
  // (publish), or the master's return is there (runner, wheel). A minion
  // return job is never complete: more returns may share its jid.
  bool complete() const;
  // When the last of its events happened (its new when it has no return).
  Micros last_event_time() const;

  enum class Next : std::uint8_t { event, end, failed };
  // The next event in order: the `new` first (when the shape has one), then
  // the returns by time. `failed` with `error` (naming the file) when a
  // return file cannot be read or decoded.
  Next next_event(tap::Event& out, std::string& error);
  std::uint64_t ignored_out_files() const { return ignored_out_; }  // out.p unreadable: the return goes without

 private:
  friend class JobReader;

  Next publish_event(tap::Event& out, std::string& error);
  Next runner_event(tap::Event& out, std::string& error);
  Next minion_return_event(tap::Event& out, std::string& error);
  Next built(std::optional<tap::Event>&& event, tap::Event& out, std::string& error, std::string_view what);
  // Reads and decodes `file` into `zone`: the value, or nullopt and `error`.
  [[nodiscard]] std::optional<msgpack::object> read_value(const std::filesystem::path& file, std::string& bytes,
                                                          msgpack::zone& zone, std::string& error) const;
  std::string tag(std::string_view what) const;

  std::filesystem::path dir_;
  CacheFilesystem& fs_;
  tap::DecodeLimits limits_;
  tap::BodyDecoder decoder_;

  std::string jid_;
  JobShape shape_ = JobShape::publish;
  std::string fun_;
  Micros started_at_ = 0;
  Micros load_mtime_ = 0;
  std::vector<std::string> expected_;
  std::vector<CachedReturn> returns_;
  std::size_t pending_dirs_ = 0;
  std::string load_bytes_;  // the load's strings point here
  msgpack::zone load_zone_;
  msgpack::object load_;
  std::size_t next_ = 0;  // events handed out
  std::uint64_t ignored_out_ = 0;
};

}  // namespace salttap::jobcache
