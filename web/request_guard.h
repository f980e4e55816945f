#pragma once
// What the job browser checks of a request before it reads anything for it
// (docs/ui.md#threat-model):
//   - Host: a name a browser may address salttap by. Against DNS rebinding: a
//     page of attacker.example whose name now points at 127.0.0.1 still sends
//     `Host: attacker.example`, which is refused (421).
//   - Origin: an API call from a page of another origin is refused (403),
//     whether or not the browser would have let that page read the answer.
//   - UTF-8: a path segment or a query parameter that does not decode to
//     valid UTF-8 is refused (400) naming the parameter, before any search.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/metrics_server.h"
#include "web/router.h"

namespace salttap::web {

class HostAllowList {
 public:
  // localhost and IP literals only (an IP literal cannot be rebound: the
  // page that names it is served by whoever listens at that address).
  HostAllowList() = default;
  // Also the host of `listen` ("HOST:PORT") and `names` (listener.allowed_hosts).
  HostAllowList(const std::string& listen, const std::vector<std::string>& names);

  // `host_header`: the request's Host ("name", "name:port", "[::1]:port"); an
  // empty one (HTTP/1.0, no browser) is allowed.
  bool allows(std::string_view host_header) const;

 private:
  std::vector<std::string> names_;  // lowercase, without a trailing dot
};

// The host name of a Host header or an authority: lowercase, without port,
// brackets or a trailing dot. Empty when it is malformed.
std::string host_name_of(std::string_view authority);

// Whether the request comes from a page of salttap's own origin (or from no
// page at all: curl, a bookmark). Cross-origin: an Origin whose host and port
// differ from Host's, an opaque "null" Origin, or Sec-Fetch-Site
// "cross-site" / "same-site".
bool same_origin(const WebRequest& request);

// The first part of `target` that is not valid UTF-8: "path", or the
// parameter's name ("fun"), or "a parameter name" when the name itself is not
// valid UTF-8. nullopt when every part is valid.
std::optional<std::string> invalid_utf8_part(const UiTarget& target);

}  // namespace salttap::web
