#include "indexer/server_info.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/json_value.h"

namespace salttap::indexer {
namespace {

using json::member;
using json::string_member;

// "8.15.0-SNAPSHOT" -> {8, 15, 0}; false unless at least "major.minor".
bool parse_version(std::string_view text, ServerVersion& out) {
  int parts[3] = {0, 0, 0};
  const char* p = text.data();
  const char* end = p + text.size();
  int n = 0;
  for (; n < 3 && p < end; ++n) {
    int part = 0;
    const auto [next, ec] = std::from_chars(p, end, part);
    if (ec != std::errc() || part < 0) break;  // "7.17.-9": 7.17.0, not 7.17.-9
    parts[n] = part;
    p = next;
    if (p == end || *p != '.') {
      ++n;
      break;
    }
    ++p;
  }
  if (n < 2) return false;
  out = {parts[0], parts[1], parts[2]};
  return true;
}

// An OpenSearch that reports 7.10.2 still reports its Lucene: 8.x ships with
// OpenSearch 1, 9.x with 2, 10.x with 3.
int opensearch_major_from_lucene(std::string_view lucene) {
  ServerVersion v;
  if (!parse_version(lucene, v)) return 0;
  if (v.major == 8) return 1;
  if (v.major == 9) return 2;
  if (v.major == 10) return 3;
  return 0;
}

std::string excerpt(std::string_view body) {
  constexpr std::size_t kMax = 120;
  // Cut at a UTF-8 character boundary: messages go into logs and JSON.
  std::size_t cut = std::min(body.size(), kMax);
  while (cut > 0 && cut < body.size() && (static_cast<unsigned char>(body[cut]) & 0xC0) == 0x80) --cut;
  std::string out;
  for (char c : body.substr(0, cut)) out.push_back(c == '\n' || c == '\r' ? ' ' : c);
  if (cut < body.size()) out += "…";
  return out;
}

ServerInfo parse_banner(const http::HttpResponse& response) {
  ServerInfo info;
  info.product_header = response.product;
  rapidjson::Document doc;
  // Iterative: a body nested a million levels deep must not exhaust the stack.
  doc.Parse<rapidjson::kParseIterativeFlag>(response.body.data(), response.body.size());
  const rapidjson::Value* version = doc.HasParseError() ? nullptr : member(doc, "version");
  if (!version || !version->IsObject()) {
    info.problem =
        fmt::format("GET / did not answer with an Elasticsearch/OpenSearch banner: {}", excerpt(response.body));
    return info;
  }
  info.number = string_member(*version, "number");
  info.build_flavor = string_member(*version, "build_flavor");
  const std::string distribution = string_member(*version, "distribution");
  const std::string tagline = string_member(doc, "tagline");
  const bool parsed = parse_version(info.number, info.version);

  if (distribution == "opensearch") {
    info.flavor = Flavor::opensearch;
  } else if (distribution.empty() && tagline.find("OpenSearch") != std::string::npos) {
    // compatibility.override_main_response_version: the banner claims 7.10.2
    // and drops `distribution`; only the tagline (and Lucene) tell.
    info.flavor = Flavor::opensearch;
    info.version_hidden = true;
    info.version = {opensearch_major_from_lucene(string_member(*version, "lucene_version")), 0, 0};
    return info;
  } else if (distribution.empty() && (response.product == "Elasticsearch" || tagline == "You Know, for Search")) {
    info.flavor = Flavor::elasticsearch;
  } else {
    info.problem = fmt::format(
        "GET / answered neither as Elasticsearch nor as OpenSearch "
        "(distribution '{}', tagline '{}')",
        excerpt(distribution), excerpt(tagline));
    return info;
  }
  if (!parsed) {
    info.problem = fmt::format("GET / reported an unreadable version number '{}'", excerpt(info.number));
    return info;
  }
  // salttap writes typeless requests: Elasticsearch 6 and older would need types.
  if (info.flavor == Flavor::elasticsearch && info.version.major < 7)
    info.problem = fmt::format("Elasticsearch {} is not supported (salttap needs Elasticsearch >= 7 or OpenSearch)",
                               excerpt(info.number));
  return info;
}

}  // namespace

std::string_view to_string(Flavor flavor) {
  switch (flavor) {
    case Flavor::elasticsearch:
      return "Elasticsearch";
    case Flavor::opensearch:
      return "OpenSearch";
    case Flavor::unknown:
      break;
  }
  return "unknown";
}

std::string_view to_string(LifecycleApi api) {
  switch (api) {
    case LifecycleApi::ilm:
      return "ILM";
    case LifecycleApi::ism:
      return "ISM";
    case LifecycleApi::none:
      break;
  }
  return "none";
}

std::string ServerInfo::describe() const {
  if (flavor == Flavor::unknown) return "unknown server";
  if (version_hidden) {
    const std::string major = version.major ? fmt::format("{}.x", version.major) : "?";
    return fmt::format("{} {} (version hidden: reports {})", to_string(flavor), major, number);
  }
  std::string out = fmt::format("{} {}", to_string(flavor), number);
  if (!build_flavor.empty() && build_flavor != "default") out += fmt::format(" ({})", build_flavor);
  return out;
}

ServerDetection detect_server(const http::HttpResponse& response) {
  ServerDetection d;
  if (response.status == 0) {
    // The client's errors start with the host they name: not twice.
    std::string_view what = response.error;
    if (what.starts_with(response.host + ": ")) what.remove_prefix(response.host.size() + 2);
    d.error = fmt::format("cannot reach the engine at {}: {}", response.host, what);
  } else if (response.status == 401 || response.status == 403) {
    d.error = fmt::format(
        "the engine at {} answered GET / with {}: it requires authentication and refused the credentials "
        "sent (none, or wrong ones); configure the indexer's credentials (username and password, or an API "
        "key) for a user allowed to manage index templates and write the salttap indices",
        response.host, response.status);
  } else if (response.status < 200 || response.status > 299) {
    d.error = fmt::format("the engine at {} answered GET / with HTTP {}: {}", response.host, response.status,
                          excerpt(response.body));
  } else {
    d.info = parse_banner(response);
  }
  return d;
}

bool composable_templates(const ServerInfo& info) {
  if (info.flavor == Flavor::opensearch) return true;  // forked from Elasticsearch 7.10
  return info.flavor == Flavor::elasticsearch && info.version >= ServerVersion{7, 8, 0};
}

std::string_view flat_type(const ServerInfo& info) {
  if (info.flavor == Flavor::elasticsearch) {
    if (info.version >= ServerVersion{7, 13, 0}) return "flattened";  // server core from 7.13
    // 7.3-7.12: x-pack (basic), which OSS builds lack; worth trying, the
    // template install drops it when the server says "No handler for type".
    if (info.version >= ServerVersion{7, 3, 0} && info.build_flavor != "oss") return "flattened";
    return {};
  }
  if (info.flavor == Flavor::opensearch) {
    // Hidden version: 1.x (told by Lucene 8) has no flat_object; 2.x may
    // (>= 2.7): try it and let the template install drop it if refused.
    if (info.version_hidden) return info.version.major == 1 ? std::string_view() : "flat_object";
    if (info.version >= ServerVersion{2, 7, 0}) return "flat_object";
  }
  return {};
}

LifecycleApi lifecycle_api(const ServerInfo& info) {
  switch (info.flavor) {
    case Flavor::elasticsearch:
      return LifecycleApi::ilm;
    case Flavor::opensearch:
      return LifecycleApi::ism;
    case Flavor::unknown:
      break;
  }
  return LifecycleApi::none;
}

}  // namespace salttap::indexer
