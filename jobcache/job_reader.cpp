#include "jobcache/job_reader.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <tuple>

#include <fmt/format.h>

#include "common/text.h"
#include "jobcache/internal/cache_file.h"
#include "jobcache/internal/job_dir.h"

namespace salttap::jobcache {
namespace {

namespace fs = std::filesystem;
using tap::as_string;
using tap::map_find;

constexpr std::uint64_t kMaxJidBytes = 1024;
constexpr std::string_view kMinionsFile = ".minions.p";

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_minion_list_file(std::string_view name) {
  // .minions.p, and a syndic's .minions.<syndic id>.p
  return name == kMinionsFile ||
         (name.size() > kMinionsFile.size() + 1 && name.starts_with(".minions.") && name.ends_with(".p"));
}

bool has_target(const msgpack::object& load) {
  const msgpack::object* tgt = map_find(load, "tgt");
  if (!tgt || tgt->type == msgpack::type::NIL) return false;
  const auto s = as_string(*tgt);
  return !s || !s->empty();  // salt's save_load keeps .minions.p only when tgt != ""
}

}  // namespace

std::string_view to_string(JobOutcome o) {
  switch (o) {
    case JobOutcome::ready:
      return "ready";
    case JobOutcome::outside_window:
      return "outside_window";
    case JobOutcome::noise:
      return "noise";
    case JobOutcome::nocache:
      return "nocache";
    case JobOutcome::incomplete:
      return "incomplete";
    case JobOutcome::undecodable:
      return "undecodable";
    case JobOutcome::unreadable:
      return "unreadable";
  }
  return "unknown";
}

bool JobReader::is_noise(const msgpack::object& load) const {
  // As the correlator: only a single function (a string) is noise.
  const msgpack::object* fun = map_find(load, "fun");
  const auto name = fun ? as_string(*fun) : std::nullopt;
  if (!name) return false;
  return std::any_of(options_.noise_funs.begin(), options_.noise_funs.end(),
                     [&](const std::string& glob) { return glob_match(glob, *name); });
}

JobRead JobReader::read(const fs::path& dir) const {
  JobRead r;
  r.dir = dir;
  const auto finish = [&](JobOutcome outcome, std::string why = {}) {
    r.outcome = outcome;
    r.error = std::move(why);
    return std::move(r);
  };

  // The jid: its time decides the window before anything else is read.
  const fs::path jid_file = dir / "jid";
  std::string jid_text;
  Micros jid_mtime = 0;
  if (const int e = fs_.read_file(jid_file, kMaxJidBytes, jid_text, &jid_mtime); e != 0)
    return finish(e == ENOENT ? JobOutcome::incomplete : JobOutcome::unreadable, read_error(jid_file, e));
  const std::string jid(trimmed(jid_text));
  if (jid.empty()) return finish(JobOutcome::incomplete, jid_file.string() + ": empty");
  Micros at = 0;
  if (const auto t = parse_jid_time(jid)) {
    at = *t;
  } else {
    at = jid_mtime;
  }
  if (!options_.window.contains(at)) return finish(JobOutcome::outside_window);
  if (!options_.hash_type.empty()) {
    const auto named = job_dir(dir.parent_path().parent_path(), jid, options_.hash_type);
    r.misnamed = named && *named != dir;
  }

  auto job = std::make_unique<CachedJob>(dir, fs_, options_.limits);
  job->jid_ = jid;
  job->started_at_ = at;

  // The load: what ran, where, by whom.
  const fs::path load_file = dir / ".load.p";
  job->load_mtime_ = at;
  if (const int e = fs_.read_file(load_file, options_.limits.max_frame_bytes, job->load_bytes_, &job->load_mtime_);
      e != 0) {
    const JobOutcome o = e == ENOENT  ? JobOutcome::incomplete
                         : e == EFBIG ? JobOutcome::undecodable
                                      : JobOutcome::unreadable;
    return finish(o, read_error(load_file, e));
  }
  if (const CacheFileResult d = decode_cache_file(job->load_zone_, job->load_bytes_, options_.limits, job->load_);
      !d.ok())
    return finish(JobOutcome::undecodable, fmt::format("{}: {}", load_file.string(), d.describe()));
  if (job->load_.type != msgpack::type::MAP)
    return finish(JobOutcome::undecodable, load_file.string() + ": not a map, so not a job's load");

  const msgpack::object& load = job->load_;
  const msgpack::object* ret = map_find(load, "return");
  const msgpack::object* fun = map_find(load, "fun");
  if (!fun && ret && ret->type == msgpack::type::MAP) fun = map_find(*ret, "fun");
  job->fun_ = tap::joined_strings(fun);
  if (ret && ret->type == msgpack::type::MAP && job->fun_.starts_with("runner."))
    job->shape_ = JobShape::runner;
  else if (ret && ret->type == msgpack::type::MAP && job->fun_.starts_with("wheel."))
    job->shape_ = JobShape::wheel;
  else if (ret && map_find(load, "id"))
    job->shape_ = JobShape::minion_return;  // came in as jid "req": the load is the return
  else
    job->shape_ = JobShape::publish;

  // As the correlator, which checks salt/job events only: runners are never noise.
  const bool job_events = job->shape_ == JobShape::publish || job->shape_ == JobShape::minion_return;
  if (job_events && is_noise(load)) {
    r.job = std::move(job);
    return finish(JobOutcome::noise);
  }
  std::string why;
  if (const JobOutcome o = read_minions(*job, why); o != JobOutcome::ready) {
    if (o == JobOutcome::nocache) r.job = std::move(job);
    return finish(o, std::move(why));
  }
  r.job = std::move(job);
  return finish(JobOutcome::ready);
}

JobOutcome JobReader::read_minions(CachedJob& job, std::string& error) const {
  int e = 0;
  auto entries = fs_.open_dir(job.dir_, e);
  if (!entries) {
    error = read_error(job.dir_, e);
    return JobOutcome::unreadable;
  }
  // The listing names everything: the minion-list files (read once it is
  // done), the minions' directories and `nocache`, with no stat of each.
  std::vector<std::string> list_files;
  bool nocache = false;
  std::string name;
  bool is_dir = false;
  while (entries->next(name, is_dir, e)) {
    if (name.starts_with('.')) {
      if (is_minion_list_file(name)) list_files.push_back(name);
    } else if (is_dir) {
      // A minion's directory; its return.p is written (renamed into place) right after it.
      const fs::path file = job.dir_ / name / "return.p";
      CacheStat st;
      if (const int se = fs_.stat(file, st); se == 0) {
        job.returns_.push_back({name, st.mtime});
      } else if (se == ENOENT) {
        ++job.pending_dirs_;
      } else {
        error = read_error(file, se);
        return JobOutcome::unreadable;
      }
    } else if (name == "nocache") {
      nocache = true;
    }  // other files: jid, endtime
  }
  if (e != 0) {
    error = read_error(job.dir_, e);
    return JobOutcome::unreadable;
  }
  if (nocache && job.shape_ == JobShape::publish) return JobOutcome::nocache;
  bool have_minions_file = false;
  std::vector<std::string> syndics;  // .minions.<syndic id>.p: that id is a syndic, not a minion
  for (const std::string& list_name : list_files) {
    have_minions_file = have_minions_file || list_name == kMinionsFile;
    if (list_name != kMinionsFile)
      syndics.emplace_back(list_name.substr(9, list_name.size() - 9 - 2));  // between ".minions." and ".p"
    const fs::path file = job.dir_ / list_name;
    std::string bytes;
    if (const int re = fs_.read_file(file, options_.limits.max_frame_bytes, bytes); re != 0) {
      error = read_error(file, re);
      return re == ENOENT ? JobOutcome::incomplete : re == EFBIG ? JobOutcome::undecodable : JobOutcome::unreadable;
    }
    msgpack::zone zone;
    msgpack::object list;
    if (const CacheFileResult d = decode_cache_file(zone, bytes, options_.limits, list); !d.ok()) {
      error = fmt::format("{}: {}", file.string(), d.describe());
      return JobOutcome::undecodable;
    }
    if (list.type == msgpack::type::NIL) continue;
    if (list.type != msgpack::type::ARRAY) {
      error = file.string() + ": not a list of minion ids";
      return JobOutcome::undecodable;
    }
    for (std::uint32_t i = 0; i < list.via.array.size; ++i)
      if (auto id = as_string(list.via.array.ptr[i])) job.expected_.emplace_back(*id);
  }
  if (job.shape_ == JobShape::publish && !have_minions_file && has_target(job.load_)) {
    error = (job.dir_ / kMinionsFile).string() + ": missing (written right after .load.p)";
    return JobOutcome::incomplete;
  }
  // A master of masters lists a syndic among the minions it published to;
  // the syndic answers with its minions' returns, never one of its own.
  std::erase_if(job.expected_, [&](const std::string& id) {
    return std::find(syndics.begin(), syndics.end(), id) != syndics.end() &&
           std::none_of(job.returns_.begin(), job.returns_.end(),
                        [&](const CachedReturn& r) { return r.minion == id; });
  });
  std::sort(job.expected_.begin(), job.expected_.end());
  job.expected_.erase(std::unique(job.expected_.begin(), job.expected_.end()), job.expected_.end());
  std::sort(job.returns_.begin(), job.returns_.end(), [](const CachedReturn& a, const CachedReturn& b) {
    return std::tie(a.mtime, a.minion) < std::tie(b.mtime, b.minion);
  });
  return JobOutcome::ready;
}

}  // namespace salttap::jobcache
