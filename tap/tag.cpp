#include "tap/tag.h"

#include <algorithm>

namespace salttap::tap {

std::string_view tag_part(std::string_view tag, std::size_t index) {
  for (std::size_t i = 0; i < index; ++i) {
    const auto slash = tag.find('/');
    if (slash == std::string_view::npos) return {};
    tag.remove_prefix(slash + 1);
  }
  return tag.substr(0, tag.find('/'));
}

std::string_view jid_from_tag(std::string_view tag) {
  if (tag.starts_with("salt/job/") || tag.starts_with("salt/run/") || tag.starts_with("salt/wheel/"))
    return tag_part(tag, 2);
  if (tag.size() >= 20 && std::all_of(tag.begin(), tag.begin() + 20, [](char c) { return c >= '0' && c <= '9'; }))
    return tag;  // the bare-jid event
  return {};
}

std::string_view minion_from_tag(std::string_view tag) {
  if (!tag.starts_with("salt/job/")) return {};
  const std::string_view kind = tag_part(tag, 3);
  return kind == "ret" || kind == "prog" ? tag_part(tag, 4) : std::string_view{};
}

}  // namespace salttap::tap
