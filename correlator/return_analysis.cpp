#include "correlator/return_analysis.h"

#include <algorithm>

#include <fmt/format.h>

#include "tap/event.h"

namespace salttap::correlator {
namespace {

using tap::as_string;
using tap::map_find;

constexpr std::size_t kMaxReasonText = 200;
constexpr std::string_view kStateSep = "_|-";

std::optional<std::int64_t> as_int(const msgpack::object& o) {
  if (o.type == msgpack::type::POSITIVE_INTEGER) return static_cast<std::int64_t>(o.via.u64);
  if (o.type == msgpack::type::NEGATIVE_INTEGER) return o.via.i64;
  return std::nullopt;
}

// retcode is an int, or a dict/list of ints for multi-function jobs.
std::optional<std::int64_t> first_nonzero_retcode(const msgpack::object& o, std::optional<std::int64_t>& plain) {
  if (auto v = as_int(o)) {
    plain = v;
    return *v != 0 ? v : std::nullopt;
  }
  if (o.type == msgpack::type::ARRAY) {
    for (std::uint32_t i = 0; i < o.via.array.size; ++i)
      if (auto v = as_int(o.via.array.ptr[i]); v && *v != 0) return v;
  }
  if (o.type == msgpack::type::MAP) {
    for (std::uint32_t i = 0; i < o.via.map.size; ++i)
      if (auto v = as_int(o.via.map.ptr[i].val); v && *v != 0) return v;
  }
  return std::nullopt;
}

std::string clip(std::string_view s) {
  if (s.size() <= kMaxReasonText) return std::string(s);
  return std::string(s.substr(0, kMaxReasonText)) + "…";
}

// "file_|-ok_file_|-/tmp/x_|-managed" -> {module, id, name, function}
std::vector<std::string_view> split_state_key(std::string_view key) {
  std::vector<std::string_view> parts;
  for (std::size_t pos; (pos = key.find(kStateSep)) != std::string_view::npos;) {
    parts.push_back(key.substr(0, pos));
    key.remove_prefix(pos + kStateSep.size());
  }
  parts.push_back(key);
  return parts;
}

// A state's comment: a string, or a list of lines.
std::string comment_text(const msgpack::object* c) { return tap::joined_strings(c, '\n'); }

// A state run returns {<state key>: {result, changes, comment, __run_num__, ...}}.
bool is_state_result_map(const msgpack::object& ret) {
  if (ret.type != msgpack::type::MAP || ret.via.map.size == 0) return false;
  for (std::uint32_t i = 0; i < ret.via.map.size; ++i) {
    const auto& kv = ret.via.map.ptr[i];
    auto key = as_string(kv.key);
    if (!key || key->find(kStateSep) == std::string_view::npos || kv.val.type != msgpack::type::MAP ||
        !map_find(kv.val, "result"))
      return false;
  }
  return true;
}

bool is_list_of_strings(const msgpack::object& o) {
  if (o.type != msgpack::type::ARRAY || o.via.array.size == 0) return false;
  for (std::uint32_t i = 0; i < o.via.array.size; ++i)
    if (!as_string(o.via.array.ptr[i])) return false;
  return true;
}

bool is_state_function(const msgpack::object* fun) {
  if (!fun) return false;
  auto s = as_string(*fun);
  return s && s->starts_with("state.");
}

void analyze_states(const msgpack::object& ret, ReturnAnalysis& a, std::size_t max_failed) {
  a.state_run = true;
  std::vector<FailedState> failed;
  for (std::uint32_t i = 0; i < ret.via.map.size; ++i) {
    const auto& kv = ret.via.map.ptr[i];
    const msgpack::object& st = kv.val;
    ++a.states.total;
    const msgpack::object* result = map_find(st, "result");
    // In test mode (result null) `changes` shows what would change: not a change.
    if (const msgpack::object* changes = map_find(st, "changes"); result->type != msgpack::type::NIL && changes &&
                                                                  changes->type == msgpack::type::MAP &&
                                                                  changes->via.map.size > 0)
      ++a.states.changed;
    if (result->type == msgpack::type::NIL) {
      ++a.states.would_change;
    } else if (result->type == msgpack::type::BOOLEAN && result->via.boolean) {
      ++a.states.succeeded;
    } else {
      ++a.states.failed;
      const auto parts = split_state_key(*as_string(kv.key));
      FailedState f;
      const auto id = map_find(st, "__id__");
      const auto name = map_find(st, "name");
      f.id = std::string(id && as_string(*id) ? *as_string(*id) : (parts.size() > 1 ? parts[1] : ""));
      f.name = std::string(name && as_string(*name) ? *as_string(*name) : (parts.size() > 2 ? parts[2] : ""));
      f.function = parts.size() >= 4 ? fmt::format("{}.{}", parts[0], parts[3]) : std::string(parts[0]);
      f.comment = clip(comment_text(map_find(st, "comment")));
      if (const auto rn = map_find(st, "__run_num__")) f.run_num = as_int(*rn).value_or(0);
      failed.push_back(std::move(f));
    }
  }
  std::sort(failed.begin(), failed.end(), [](const auto& x, const auto& y) { return x.run_num < y.run_num; });
  if (failed.size() > max_failed) failed.resize(max_failed);
  a.failed_states = std::move(failed);
}

}  // namespace

StateCounts& StateCounts::operator+=(const StateCounts& o) {
  total += o.total;
  succeeded += o.succeeded;
  failed += o.failed;
  changed += o.changed;
  would_change += o.would_change;
  return *this;
}

ReturnAnalysis analyze_return(const msgpack::object& data, std::size_t max_failed_states) {
  ReturnAnalysis a;
  // One pass over the top-level keys (returns are read once each, on the hot path).
  const msgpack::object *ret = nullptr, *fun = nullptr, *retcode = nullptr, *success = nullptr;
  if (data.type == msgpack::type::MAP) {
    for (std::uint32_t i = 0; i < data.via.map.size; ++i) {
      const auto key = as_string(data.via.map.ptr[i].key);
      if (!key) continue;
      const msgpack::object* v = &data.via.map.ptr[i].val;
      if (*key == "return")
        ret = v;
      else if (*key == "fun")
        fun = v;
      else if (*key == "retcode")
        retcode = v;
      else if (*key == "success")
        success = v;
    }
  }
  std::string reason;
  const auto first = [&](std::string r) {
    if (reason.empty()) reason = std::move(r);
  };

  if (ret && is_state_result_map(*ret)) {
    analyze_states(*ret, a, max_failed_states);
    if (a.states.failed > 0) first(fmt::format("{} of {} states failed", a.states.failed, a.states.total));
  } else if (ret && is_state_function(fun) && is_list_of_strings(*ret)) {
    a.state_run = true;
    first("render/compile error: " + clip(*as_string(ret->via.array.ptr[0])));
  } else if (ret && ret->type == msgpack::type::STR) {
    if (auto s = as_string(*ret); s->find(" is not available") != std::string_view::npos)
      first("function not available: " + clip(*s));
  }
  if (retcode) {
    if (auto bad = first_nonzero_retcode(*retcode, a.retcode)) first(fmt::format("retcode {}", *bad));
  }
  if (success && success->type == msgpack::type::BOOLEAN && !success->via.boolean) first("success false");

  if (!reason.empty()) {
    a.failed = true;
    a.reason = std::move(reason);
  }
  return a;
}

}  // namespace salttap::correlator
