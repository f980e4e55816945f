#include "cli/internal/event_filter.h"

#include <algorithm>

#include "common/text.h"
#include "tap/tag.h"

namespace salttap::cli {

bool any_glob_match(const std::vector<std::string>& globs, std::string_view value) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return glob_match(g, value); });
}

namespace {

bool any_match(const std::vector<std::string>& globs, std::initializer_list<std::string_view> values) {
  for (auto v : values)
    if (!v.empty() && any_glob_match(globs, v)) return true;
  return false;
}

}  // namespace

bool EventFilter::matches(const tap::Event& e) const {
  if (!tags.empty() && !any_glob_match(tags, e.tag())) return false;
  if (!funs.empty()) {
    // `fun` is a list for multi-function jobs: any element may match.
    const msgpack::object* fun = e.find("fun");
    bool ok = false;
    if (fun && fun->type == msgpack::type::ARRAY) {
      for (std::uint32_t i = 0; i < fun->via.array.size && !ok; ++i)
        if (auto s = tap::as_string(fun->via.array.ptr[i])) ok = any_glob_match(funs, *s);
    } else if (fun) {
      if (auto s = tap::as_string(*fun)) ok = any_glob_match(funs, *s);
    }
    if (!ok) return false;
  }
  if (!minions.empty() && !any_match(minions, {e.string_field("id").value_or(""), tap::minion_from_tag(e.tag())}))
    return false;
  if (!jids.empty() && !any_match(jids, {e.string_field("jid").value_or(""), tap::jid_from_tag(e.tag())})) return false;
  if (!users.empty() && !any_glob_match(users, e.string_field("user").value_or(""))) return false;
  return true;
}

}  // namespace salttap::cli
