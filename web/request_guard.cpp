#include "web/request_guard.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "common/text.h"

namespace salttap::web {
namespace {

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool is_ip_literal(const std::string& name) {
  std::array<unsigned char, 16> addr{};
  return ::inet_pton(AF_INET, name.c_str(), addr.data()) == 1 || ::inet_pton(AF_INET6, name.c_str(), addr.data()) == 1;
}

// "host[:port]" of an Origin ("https://host:port"); empty when there is none.
std::string_view authority_of_origin(std::string_view origin) {
  const auto scheme = origin.find("://");
  if (scheme == std::string_view::npos) return {};
  std::string_view rest = origin.substr(scheme + 3);
  return rest.substr(0, rest.find('/'));
}

}  // namespace

std::string host_name_of(std::string_view authority) {
  std::string_view name = authority;
  if (name.starts_with('[')) {
    const auto close = name.find(']');
    if (close == std::string_view::npos) return {};
    const std::string_view after = name.substr(close + 1);
    if (!after.empty() && !after.starts_with(':')) return {};
    name = name.substr(1, close - 1);
  } else if (const auto colon = name.find(':'); colon != std::string_view::npos) {
    name = name.substr(0, colon);
  }
  if (name.ends_with('.')) name.remove_suffix(1);
  for (const char c : name)
    if (static_cast<unsigned char>(c) <= ' ' || c == '/' || c == '@' || c == '\\') return {};
  return lowercase(name);
}

HostAllowList::HostAllowList(const std::string& listen, const std::vector<std::string>& names) {
  const auto colon = listen.rfind(':');
  if (colon != std::string::npos) names_.push_back(host_name_of(listen.substr(0, colon) + ":0"));
  for (const auto& n : names) names_.push_back(host_name_of(n));
  std::erase(names_, std::string{});
}

bool HostAllowList::allows(std::string_view host_header) const {
  if (host_header.empty()) return true;
  const std::string name = host_name_of(host_header);
  if (name.empty()) return false;
  if (name == "localhost" || is_ip_literal(name)) return true;
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

bool same_origin(const WebRequest& request) {
  const std::string site = lowercase(request.fetch_site);
  if (site == "cross-site" || site == "same-site") return false;
  if (request.origin.empty()) return true;
  const std::string_view authority = authority_of_origin(request.origin);
  if (authority.empty()) return false;  // "null": a sandboxed frame, a file, a redirect across origins
  return lowercase(authority) == lowercase(request.host);
}

std::optional<std::string> invalid_utf8_part(const UiTarget& target) {
  if (!is_valid_utf8(target.path) || !is_valid_utf8(target.argument)) return "path";
  for (const auto& [name, value] : target.query) {
    if (!is_valid_utf8(name)) return "a parameter name";
    if (!is_valid_utf8(value)) return name;
  }
  return std::nullopt;
}

}  // namespace salttap::web
