// libFuzzer target: what the job browser reads of a request before anything
// else (web/router.h, web/request_guard.h): the request target routed and
// percent-decoded, the Host allow-list, the Origin check and the UTF-8 check.
//
//   input: target "\n" Host "\n" Origin "\n" Sec-Fetch-Site (missing lines: empty)
//
// Contract checked: decoding never grows a part beyond the target; a route's
// argument is one segment; invalid_utf8_part is nullopt exactly when every part
// is valid UTF-8, and names a parameter that is there; an allowed non-empty
// Host has a host name; no Origin and no Sec-Fetch-Site is always same-origin.
//
// Seeds: make_corpus.py (the attack run's requests: %FF, %0A, rebinding hosts,
// origins, long and odd targets).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/text.h"
#include "tests/fuzz/fuzz_common.h"
#include "web/request_guard.h"
#include "web/router.h"

namespace {

std::string_view next_line(std::string_view& rest) {
  const auto nl = rest.find('\n');
  const std::string_view line = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace salttap;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const std::string_view target = next_line(rest);
  WebRequest request{"GET",
                     std::string(target),
                     "",
                     std::string(next_line(rest)),
                     std::string(next_line(rest)),
                     std::string(next_line(rest))};

  for (const bool root_redirect : {false, true}) {
    const web::UiTarget t = web::route_ui(target, root_redirect);
    FUZZ_CHECK(t.path.size() <= target.size());
    FUZZ_CHECK(t.argument.size() <= target.size());
    std::size_t query_bytes = 0;
    for (const auto& [name, value] : t.query) query_bytes += name.size() + value.size();
    FUZZ_CHECK(query_bytes <= target.size());
    if (t.route == web::UiRoute::redirect) FUZZ_CHECK(t.location == "/ui/");

    const auto bad = web::invalid_utf8_part(t);
    bool all_valid = is_valid_utf8(t.path) && is_valid_utf8(t.argument);
    for (const auto& [name, value] : t.query) all_valid = all_valid && is_valid_utf8(name) && is_valid_utf8(value);
    FUZZ_CHECK(bad.has_value() != all_valid);
    if (bad && *bad != "path" && *bad != "a parameter name") FUZZ_CHECK(t.query.contains(*bad));
  }

  const web::HostAllowList hosts("127.0.0.1:9109", {"salt.example"});
  if (hosts.allows(request.host) && !request.host.empty()) FUZZ_CHECK(!web::host_name_of(request.host).empty());
  const bool same = web::same_origin(request);
  if (request.origin.empty() && request.fetch_site.empty()) FUZZ_CHECK(same);
  return 0;
}
