#pragma once
// Filters for `salttap watch`: each option is repeatable (any value matches)
// and different options combine (all must match). Values are shell globs.

#include <string>
#include <string_view>
#include <vector>

#include "tap/event.h"

namespace salttap::cli {

struct EventFilter {
  std::vector<std::string> tags;     // the event tag
  std::vector<std::string> funs;     // data.fun (job new/ret, runner, wheel)
  std::vector<std::string> minions;  // data.id, or <minion> in salt/job/<jid>/ret|prog/<minion>
  std::vector<std::string> jids;     // data.jid, or <jid> in the tag
  std::vector<std::string> users;    // data.user

  bool empty() const { return tags.empty() && funs.empty() && minions.empty() && jids.empty() && users.empty(); }
  [[nodiscard]] bool matches(const tap::Event& event) const;
};

// True when `value` matches any of `globs`.
[[nodiscard]] bool any_glob_match(const std::vector<std::string>& globs, std::string_view value);

}  // namespace salttap::cli
