#include "dashboards/dashboards_import.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/log.h"
#include "dashboards/saved_objects.h"

// Set by dashboards/CMakeLists.txt: where `cmake --install` puts the exports, and
// the tree this binary was built from (a build that was never installed).
#ifndef SALTTAP_INSTALL_DATADIR
#define SALTTAP_INSTALL_DATADIR ""
#endif
#ifndef SALTTAP_SOURCE_DIR
#define SALTTAP_SOURCE_DIR ""
#endif

namespace salttap::dashboards {
namespace {

constexpr std::string_view kImportPath = "/api/saved_objects/_import?overwrite=true";

std::string text_of(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return {};
  const auto m = v.FindMember(key);
  return m != v.MemberEnd() && m->value.IsString() ? std::string(m->value.GetString(), m->value.GetStringLength())
                                                   : std::string();
}

std::string body_excerpt(std::string_view body) {
  std::string s(body.substr(0, 200));
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return body.size() > 200 ? s + "..." : s;
}

// Kibana and Dashboards answer errors as {"statusCode":400,"error":"Bad Request","message":"..."}.
std::string error_message(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (!doc.HasParseError()) {
    std::string message = text_of(doc, "message");
    if (message.empty()) message = text_of(doc, "error");
    if (!message.empty()) return message;
  }
  return body.empty() ? "(empty body)" : body_excerpt(body);
}

// One failed object of a 200 {"success":false,"errors":[...]} answer.
std::string describe_failure(const rapidjson::Value& e) {
  std::string line = fmt::format("{} {}", text_of(e, "type"), text_of(e, "id"));
  if (const std::string title = text_of(e, "title"); !title.empty()) line += fmt::format(" (\"{}\")", title);
  const auto err = e.IsObject() ? e.FindMember("error") : e.MemberEnd();
  if (err == e.MemberEnd() || !err->value.IsObject()) return line + ": failed";
  line += ": " + text_of(err->value, "type");
  if (const std::string message = text_of(err->value, "message"); !message.empty()) line += ": " + message;
  const auto refs = err->value.FindMember("references");
  if (refs != err->value.MemberEnd() && refs->value.IsArray() && !refs->value.Empty()) {
    line += "; missing:";
    for (const auto& r : refs->value.GetArray()) line += fmt::format(" {} {}", text_of(r, "type"), text_of(r, "id"));
  }
  return line;
}

}  // namespace

DashboardsProduct dashboards_for(indexer::Flavor flavor) {
  if (flavor == indexer::Flavor::opensearch)
    return {"OpenSearch Dashboards", "opensearch-dashboards", "osd-xsrf: true"};
  return {"Kibana", "kibana", "kbn-xsrf: true"};
}

std::vector<std::filesystem::path> saved_objects_candidates(const DashboardsProduct& product) {
  namespace fs = std::filesystem;
  const fs::path file = fs::path(product.export_dir) / "salttap.ndjson";
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back(exe.parent_path().parent_path() / "share" / "salttap" / "dashboards" / file);
  if (const fs::path installed = fs::path(SALTTAP_INSTALL_DATADIR); !installed.empty()) {
    const fs::path p = installed / "salttap" / "dashboards" / file;
    if (out.empty() || p.lexically_normal() != out.front().lexically_normal()) out.push_back(p);
  }
  if (const fs::path source = fs::path(SALTTAP_SOURCE_DIR); !source.empty()) out.push_back(source / "deploy" / file);
  return out;
}

SavedObjectsFile read_saved_objects(const std::filesystem::path& path) {
  SavedObjectsFile out;
  out.path = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    out.error = fmt::format("{}: is a directory", path.string());
    return out;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    out.error = fmt::format("{}: {}", path.string(), std::error_code(errno, std::generic_category()).message());
    return out;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    out.error = fmt::format("{}: read failed", path.string());
    return out;
  }
  out.text = std::move(text).str();
  return out;
}

SavedObjectsFile find_saved_objects(const std::vector<std::filesystem::path>& candidates) {
  std::string tried;
  for (const auto& p : candidates) {
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return read_saved_objects(p);
    tried += (tried.empty() ? "" : ", ") + p.string();
  }
  SavedObjectsFile out;
  out.error = fmt::format("no saved-objects export found (looked for {}); name one with --dashboards-file",
                          tried.empty() ? std::string("nothing") : tried);
  return out;
}

int import_dashboards(http::HttpClient& http, const DashboardsImport& import, std::FILE* out) {
  const MultipartBody form = multipart_file("file", "salttap.ndjson", "application/ndjson", import.ndjson);
  http::HttpRequest request;
  request.method = "POST";
  request.path = std::string(kImportPath);
  request.body = form.body;
  request.content_type = form.content_type;
  request.headers = {std::string(import.product.xsrf_header)};
  const http::HttpResponse r = http.send(request);
  const std::string_view name = import.product.name;
  if (r.status == 0) {
    log::error("setup: dashboards: no answer from {} at {}: {}", name, import.url, r.error);
    return kDashboardsUnreachable;
  }
  if (r.status == 401 || r.status == 403) {
    log::error(
        "setup: dashboards: {} at {} refused the credentials (HTTP {}: {}); it takes the indexer's "
        "username and password or API key, which need the saved-objects privileges there",
        name, import.url, r.status, error_message(r.body));
    return kDashboardsAuth;
  }
  if (r.status < 200 || r.status > 299) {
    const std::string hint = r.status == 404 ? fmt::format(
                                                   "; is {} the base URL of {} (with /s/<space> for a Kibana "
                                                   "space)?",
                                                   import.url, name)
                                             : std::string();
    log::error("setup: dashboards: {} at {} answered HTTP {}: {}{}", name, import.url, r.status, error_message(r.body),
               hint);
    return kDashboardsRefused;
  }
  rapidjson::Document doc;
  doc.Parse(r.body.data(), r.body.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("success") || !doc["success"].IsBool()) {
    log::error("setup: dashboards: {} answered HTTP {} but not as the saved-objects import API does: {}", import.url,
               r.status, body_excerpt(r.body));
    return kDashboardsRefused;
  }
  const auto count = doc.HasMember("successCount") && doc["successCount"].IsUint() ? doc["successCount"].GetUint() : 0;
  if (doc["success"].GetBool()) {
    std::fprintf(out, "dashboards: imported %u of %zu objects into %.*s at %s\n", count, import.objects,
                 static_cast<int>(name.size()), name.data(), import.url.c_str());
    return 0;
  }
  const auto errors = doc.FindMember("errors");
  const bool listed = errors != doc.MemberEnd() && errors->value.IsArray();
  log::error("setup: dashboards: {} at {} imported {} of {} objects; {} failed", name, import.url, count,
             import.objects, listed ? errors->value.Size() : 0);
  if (listed)
    for (const auto& e : errors->value.GetArray()) log::error("setup: dashboards: {}", describe_failure(e));
  return kDashboardsObjects;
}

}  // namespace salttap::dashboards
