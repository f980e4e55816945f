#include "web/router.h"

#include "common/enum_names.h"

namespace salttap::web {
namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::map<std::string, std::string> parse_query(std::string_view q) {
  std::map<std::string, std::string> out;
  while (!q.empty()) {
    const auto amp = q.find('&');
    const std::string_view pair = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view{} : q.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    std::string name = percent_decode(pair.substr(0, eq), true);
    out[std::move(name)] = eq == std::string_view::npos ? std::string{} : percent_decode(pair.substr(eq + 1), true);
  }
  return out;
}

// The rest of `path` after `prefix`, when it starts with it and the rest is
// one non-empty segment.
bool one_segment_after(std::string_view path, std::string_view prefix, std::string& argument) {
  if (!path.starts_with(prefix) || path.size() == prefix.size()) return false;
  const std::string_view rest = path.substr(prefix.size());
  if (rest.find('/') != std::string_view::npos) return false;
  argument = std::string(rest);
  return true;
}

}  // namespace

std::string_view to_string(UiRoute route) {
  if (route == UiRoute::redirect) return "other";  // a redirect is counted with the other answers
  return enumerator_name(route, "other");
}

std::string percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

UiTarget route_ui(std::string_view target, bool root_redirect) {
  UiTarget t;
  const auto question = target.find('?');
  // Segments are split before decoding: an escaped '/' (%2F) stays inside its segment.
  const std::string_view raw_path = target.substr(0, question);
  if (question != std::string_view::npos) t.query = parse_query(target.substr(question + 1));
  t.path = percent_decode(raw_path, false);
  std::string raw_argument;
  const bool root = (raw_path.empty() || raw_path == "/") && root_redirect;
  if (root || raw_path == "/ui") {
    t.route = UiRoute::redirect;
    t.location = "/ui/";
  } else if (raw_path == "/ui/" || raw_path == "/ui/minions" || raw_path == "/ui/alerts" ||
             one_segment_after(raw_path, "/ui/job/", raw_argument) ||
             one_segment_after(raw_path, "/ui/minion/", raw_argument)) {
    t.route = UiRoute::page;
  } else if (one_segment_after(raw_path, "/ui/static/", raw_argument)) {
    t.route = UiRoute::asset;
  } else if (raw_path == "/ui/api/jobs") {
    t.route = UiRoute::api_jobs;
  } else if (one_segment_after(raw_path, "/ui/api/jobs/", raw_argument)) {
    t.route = UiRoute::api_job;
  } else if (raw_path == "/ui/api/minions") {
    t.route = UiRoute::api_minions;
  } else if (one_segment_after(raw_path, "/ui/api/minions/", raw_argument)) {
    t.route = UiRoute::api_minion;
  } else if (raw_path == "/ui/api/alerts") {
    t.route = UiRoute::api_alerts;
  }
  t.argument = percent_decode(raw_argument, false);
  return t;
}

}  // namespace salttap::web
