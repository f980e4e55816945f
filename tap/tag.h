#pragma once
// Parts of Salt's event tags (docs/salt-event-bus.md §6): salt/job/<jid>/ret/<minion>,
// salt/job/<jid>/prog/<minion>/<n>, salt/run/<jid>/new, the bare <jid> tag.

#include <string_view>

namespace salttap::tap {

// Part `index` of "a/b/c" (0-based), or "" when there are fewer parts.
std::string_view tag_part(std::string_view tag, std::size_t index);
std::string_view jid_from_tag(std::string_view tag);
std::string_view minion_from_tag(std::string_view tag);

}  // namespace salttap::tap
