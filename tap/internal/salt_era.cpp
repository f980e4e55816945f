#include "tap/internal/salt_era.h"

#include <algorithm>

namespace salttap::tap {
namespace {

bool is_bare_jid(std::string_view tag) {
  return tag.size() >= 20 && std::all_of(tag.begin(), tag.begin() + 20, [](char c) { return c >= '0' && c <= '9'; }) &&
         (tag.size() == 20 || tag[20] == '_');
}

bool is_publish_tag(std::string_view tag) { return tag.starts_with("salt/job/") && tag.ends_with("/publish"); }

}  // namespace

void SaltEraDetector::observe(const Event& event) {
  // Our own fired events carry our _stamp, not the master's.
  if (event.tag().starts_with("salttap/")) return;
  if (auto stamp = event.string_field("_stamp")) {
    if (stamp->ends_with("+00:00"))
      tz_stamp_ = true;
    else
      naive_stamp_ = true;
  }
  if (is_publish_tag(event.tag())) publish_event_ = true;
  if (is_bare_jid(event.tag())) bare_jid_event_ = true;
}

std::string_view SaltEraDetector::describe() const {
  if (framing_ == Framing::len32) return "3006.26+ (length-prefixed pub)";
  if (framing_ == Framing::unknown) return "unknown";
  if (tz_stamp_) return "3008.x (timezone-aware _stamp)";
  if (publish_event_) return "3007.x (publish events, naive _stamp)";
  if (bare_jid_event_ && naive_stamp_) return "2016.3-3006.25 or 3007.x (plain pub)";
  if (naive_stamp_) return "2016.3-3007.x (plain pub, naive _stamp)";
  return "plain pub (release not yet known)";
}

}  // namespace salttap::tap
