#include "jobcache/cached_job.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "jobcache/internal/cache_file.h"
#include "jobcache/internal/event_body.h"

namespace salttap::jobcache {
namespace {

using tap::as_string;
using tap::map_find;

// salt.payload files of a job are small but for returns; a return file is
// held to the bus's own frame limit.
constexpr std::uint64_t kMaxOutFileBytes = std::uint64_t{64} << 10;

std::string stamp(Micros t) { return format_utc(t); }

}  // namespace

std::string_view to_string(JobShape s) {
  switch (s) {
    case JobShape::publish:
      return "publish";
    case JobShape::runner:
      return "runner";
    case JobShape::wheel:
      return "wheel";
    case JobShape::minion_return:
      return "minion_return";
  }
  return "unknown";
}

bool CachedJob::complete() const {
  switch (shape_) {
    case JobShape::runner:
    case JobShape::wheel:
      return true;
    case JobShape::minion_return:
      return false;
    case JobShape::publish:
      break;
  }
  return std::all_of(expected_.begin(), expected_.end(), [&](const std::string& m) {
    return std::any_of(returns_.begin(), returns_.end(), [&](const CachedReturn& r) { return r.minion == m; });
  });
}

Micros CachedJob::last_event_time() const {
  Micros t = started_at_;
  if (shape_ != JobShape::publish && returns_.empty()) t = std::max(t, load_mtime_);
  for (const CachedReturn& r : returns_) t = std::max(t, r.mtime);
  return t;
}

std::string CachedJob::tag(std::string_view what) const {
  switch (shape_) {
    case JobShape::runner:
      return fmt::format("salt/run/{}/{}", jid_, what);
    case JobShape::wheel:
      return fmt::format("salt/wheel/{}/{}", jid_, what);
    case JobShape::publish:
    case JobShape::minion_return:
      break;
  }
  return fmt::format("salt/job/{}/{}", jid_, what);
}

std::optional<msgpack::object> CachedJob::read_value(const std::filesystem::path& file, std::string& bytes,
                                                     msgpack::zone& zone, std::string& error) const {
  if (const int e = fs_.read_file(file, limits_.max_frame_bytes, bytes); e != 0) {
    error = read_error(file, e);
    return std::nullopt;
  }
  msgpack::object value;
  if (const CacheFileResult r = decode_cache_file(zone, bytes, limits_, value); !r.ok()) {
    error = fmt::format("{}: {}", file.string(), r.describe());
    return std::nullopt;
  }
  return value;
}

CachedJob::Next CachedJob::built(std::optional<tap::Event>&& event, tap::Event& out, std::string& error,
                                 std::string_view what) {
  if (!event) {
    error = fmt::format("{}: the {} event does not decode: {}", dir_.string(), what, decoder_.last_error());
    return Next::failed;
  }
  out = std::move(*event);
  ++next_;
  return Next::event;
}

CachedJob::Next CachedJob::next_event(tap::Event& out, std::string& error) {
  switch (shape_) {
    case JobShape::publish:
      return publish_event(out, error);
    case JobShape::runner:
    case JobShape::wheel:
      return runner_event(out, error);
    case JobShape::minion_return:
      return minion_return_event(out, error);
  }
  return Next::end;
}

CachedJob::Next CachedJob::publish_event(tap::Event& out, std::string& error) {
  if (next_ == 0) {
    // salt/job/<jid>/new as the master fires it (docs/salt-event-bus.md §6.1),
    // without `missing`: the cache does not keep it.
    EventBody body;
    body.add_string("jid", jid_);
    for (const char* key : {"tgt_type", "tgt", "user", "fun", "arg"})
      if (const msgpack::object* v = map_find(load_, key)) body.add(key, *v);
    // The publish's `metadata` (the bus carries it in the returns only): a
    // re-run's link to the job it repeats (docs/remediation.md) survives a
    // job whose minions all missed it.
    if (const msgpack::object* kw = map_find(load_, "kwargs"); kw && kw->type == msgpack::type::MAP)
      if (const msgpack::object* meta = map_find(*kw, "metadata")) body.add("metadata", *meta);
    msgpack::zone zone;
    msgpack::object minions;
    minions.type = msgpack::type::ARRAY;
    minions.via.array.size = static_cast<std::uint32_t>(expected_.size());
    minions.via.array.ptr = static_cast<msgpack::object*>(
        zone.allocate_align(sizeof(msgpack::object) * std::max<std::size_t>(1, expected_.size())));
    for (std::size_t i = 0; i < expected_.size(); ++i) minions.via.array.ptr[i] = msgpack::object(expected_[i], zone);
    body.add("minions", minions);
    body.add_string("_stamp", stamp(started_at_));
    return built(body.build(tag("new"), decoder_), out, error, "new");
  }
  if (next_ > returns_.size()) return Next::end;
  const CachedReturn& r = returns_[next_ - 1];
  const std::filesystem::path minion_dir = dir_ / r.minion;
  std::string bytes;
  msgpack::zone zone;
  const auto value = read_value(minion_dir / "return.p", bytes, zone, error);
  if (!value) return Next::failed;
  // salt.returners.local_cache.get_jid: anything but a map holding `return`
  // is the bare return value of a release before 2018.3.
  const bool wrapped = value->type == msgpack::type::MAP && map_find(*value, "return") != nullptr;
  EventBody body;
  body.add_string("cmd", "_return");
  body.add_string("id", r.minion);
  if (wrapped) {
    for (const char* key : {"success", "return", "retcode"})
      if (const msgpack::object* v = map_find(*value, key)) body.add(key, *v);
  } else {
    body.add("return", *value);
  }
  body.add_string("jid", jid_);
  if (const msgpack::object* fun = map_find(load_, "fun")) body.add("fun", *fun);
  if (const msgpack::object* arg = map_find(load_, "arg")) body.add("fun_args", *arg);
  if (const msgpack::object* user = map_find(load_, "user")) body.add("user", *user);
  std::string out_bytes;
  msgpack::zone out_zone;
  if (const int e = fs_.read_file(minion_dir / "out.p", kMaxOutFileBytes, out_bytes); e == 0) {
    msgpack::object outputter;
    if (decode_cache_file(out_zone, out_bytes, limits_, outputter).ok() && as_string(outputter))
      body.add("out", outputter);
    else
      ++ignored_out_;
  } else if (e != ENOENT) {
    ++ignored_out_;
  }
  body.add_string("_stamp", stamp(r.mtime));
  return built(body.build(tag("ret/" + r.minion), decoder_), out, error, "ret");
}

CachedJob::Next CachedJob::runner_event(tap::Event& out, std::string& error) {
  // The load's `return` is the master's own event data: {fun, jid, user,
  // fun_args, _stamp (the new event's), return, success}.
  const msgpack::object* event_data = map_find(load_, "return");
  if (event_data && event_data->type != msgpack::type::MAP) event_data = nullptr;
  if (next_ == 0) {
    EventBody body;
    if (event_data) body.add_all(*event_data, {"return", "success", "retcode", "_stamp"});
    if (!event_data || !map_find(*event_data, "fun"))
      if (const msgpack::object* fun = map_find(load_, "fun")) body.add("fun", *fun);
    if (!event_data || !map_find(*event_data, "jid")) body.add_string("jid", jid_);
    const msgpack::object* new_stamp = event_data ? map_find(*event_data, "_stamp") : nullptr;
    if (new_stamp && as_string(*new_stamp) && parse_salt_stamp(*as_string(*new_stamp)))
      body.add("_stamp", *new_stamp);
    else
      body.add_string("_stamp", stamp(started_at_));
    return built(body.build(tag("new"), decoder_), out, error, "new");
  }
  if (next_ > 1) return Next::end;
  // The ret: the master's return.p ({return: <event data>}) when there is one.
  std::string bytes;
  msgpack::zone zone;
  const msgpack::object* data = event_data;
  Micros at = load_mtime_;
  if (!returns_.empty()) {
    const auto value = read_value(dir_ / returns_.front().minion / "return.p", bytes, zone, error);
    if (!value) return Next::failed;
    const msgpack::object* inner = map_find(*value, "return");
    if (inner && inner->type == msgpack::type::MAP) data = inner;
    at = returns_.front().mtime;
  }
  EventBody body;
  if (data) {
    body.add_all(*data, {"_stamp"});
  } else {
    if (const msgpack::object* fun = map_find(load_, "fun")) body.add("fun", *fun);
    body.add_string("jid", jid_);
  }
  body.add_string("_stamp", stamp(at));
  return built(body.build(tag("ret"), decoder_), out, error, "ret");
}

CachedJob::Next CachedJob::minion_return_event(tap::Event& out, std::string& error) {
  if (next_ > 0) return Next::end;
  // The load is the return as the minion sent it, with the jid the master
  // gave it, `arg`, `tgt` and `tgt_type` added (salt.utils.job.store_job).
  const auto id = map_find(load_, "id") ? as_string(*map_find(load_, "id")) : std::nullopt;
  std::string minion = id ? std::string(*id) : (returns_.empty() ? std::string() : returns_.front().minion);
  Micros at = load_mtime_;
  for (const CachedReturn& r : returns_)
    if (r.minion == minion) at = r.mtime;
  EventBody body;
  body.add_all(load_, {"_stamp", "jid"});
  body.add_string("jid", jid_);
  body.add_string("_stamp", stamp(at));
  return built(body.build(tag("ret/" + minion), decoder_), out, error, "ret");
}

}  // namespace salttap::jobcache
