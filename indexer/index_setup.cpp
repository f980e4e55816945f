#include "indexer/index_setup.h"

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/enum_names.h"
#include "common/json_value.h"
#include "common/log.h"

namespace salttap::indexer {
namespace {

using json::member;

bool ok(const http::HttpResponse& r) { return r.status >= 200 && r.status <= 299; }
// Worth retrying the whole setup later rather than degrading.
bool transient(const http::HttpResponse& r) { return r.status == 0 || r.status == 429 || r.status >= 500; }
bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// The API is not there: unknown endpoint (404/405, 410 on serverless), "no
// handler found for uri" (400), or - an Elasticsearch without x-pack - the
// path taken as a document PUT into an index named "_ilm" (400,
// invalid_index_name_exception).
bool api_absent(const http::HttpResponse& r) {
  if (r.status == 404 || r.status == 405 || r.status == 410) return true;
  return r.status == 400 && (contains(r.body, "no handler found") || contains(r.body, "invalid_index_name_exception"));
}

SetupFailure failure_of(const http::HttpResponse& r) {
  if (r.status == 0) return r.tls_failed ? SetupFailure::tls : SetupFailure::transport;
  if (r.status == 401 || r.status == 403) return SetupFailure::http_auth;
  return SetupFailure::http_error;
}

std::string describe_failure(const http::HttpResponse& r) {
  if (r.status == 0) {
    // The client's errors start with the host they name: not twice.
    std::string_view what = r.error;
    if (what.starts_with(r.host + ": ")) what.remove_prefix(r.host.size() + 2);
    return fmt::format("no answer from {}: {}", r.host, what);
  }
  return fmt::format("HTTP {}: {}", r.status, engine_error_reason(r.body));
}

std::string type_and_reason(const rapidjson::Value& e) {
  const std::string type = json::string_member(e, "type"), reason = json::string_member(e, "reason");
  return type.empty() || reason.empty() ? type + reason : type + ": " + reason;
}

class Setup {
 public:
  Setup(http::HttpClient& http, const IndexLayout& layout, const TemplateSettings& settings)
      : http_(http), layout_(layout), settings_(settings) {}

  IndexSetupReport run(bool states_index) {
    if (!detect()) return std::move(report_);
    if (settings_.retention_days && !install_lifecycle(*settings_.retention_days)) return std::move(report_);
    report_.template_api = composable_templates(report_.server) ? TemplateApi::composable : TemplateApi::legacy;
    report_.flat_type = std::string(flat_type(report_.server));
    for (const auto kind : kIndexKinds) {
      if (kind == "states" && !states_index) continue;
      if (!install_template(kind)) return std::move(report_);
    }
    for (const auto kind : kEntityKinds)
      if (!install_template(kind)) return std::move(report_);
    report_.ok = true;
    log::info("index setup on {}: {} {} templates, return_flat {}, retention {}", report_.server.describe(),
              report_.installed.size() - (report_.lifecycle == LifecycleApi::none ? 0 : 1),
              report_.template_api == TemplateApi::composable ? "composable" : "legacy",
              report_.flat_type.empty() ? "not mapped" : report_.flat_type,
              report_.lifecycle == LifecycleApi::none
                  ? std::string("none")
                  : fmt::format("{} policy {} ({} days)", to_string(report_.lifecycle), lifecycle_policy_name(layout_),
                                *settings_.retention_days));
    return std::move(report_);
  }

 private:
  http::HttpResponse send(std::string method, std::string path, std::string body = {}) {
    http::HttpRequest request;
    request.method = std::move(method);
    request.path = std::move(path);
    request.body = std::move(body);
    return http_.send(request);
  }

  bool fail(std::string error, bool retryable, SetupFailure why) {
    report_.ok = false;
    report_.error = std::move(error);
    report_.failure = why;
    report_.retryable = retryable;
    return false;
  }

  void degrade(std::string line) {
    log::warn("index setup: {}", line);
    report_.degraded.push_back(std::move(line));
  }

  bool detect() {
    const http::HttpResponse r = send("GET", "/");
    ServerDetection d = detect_server(r);
    report_.server = std::move(d.info);
    if (!d.error.empty()) return fail(std::move(d.error), transient(r), failure_of(r));
    if (!report_.server.usable()) return fail(report_.server.problem, false, SetupFailure::not_an_engine);
    return true;
  }

  // False only on a fatal failure; absence or refusal degrades.
  bool install_lifecycle(int days) {
    if (days < 1)
      return fail(fmt::format("retention_days must be at least 1 (got {})", days), false, SetupFailure::config);
    switch (lifecycle_api(report_.server)) {
      case LifecycleApi::ilm:
        return install_ilm(days);
      case LifecycleApi::ism:
        return install_ism(days);
      case LifecycleApi::none:
        break;
    }
    degrade(fmt::format("{} has no lifecycle API salttap knows: indices are not deleted after {} days",
                        report_.server.describe(), days));
    return true;
  }

  bool install_ilm(int days) {
    const std::string path = fmt::format("/_ilm/policy/{}", lifecycle_policy_name(layout_));
    const http::HttpResponse r = send("PUT", path, ilm_policy_body(days));
    if (ok(r)) return installed(LifecycleApi::ilm, "PUT " + path);
    if (transient(r))
      return fail(fmt::format("installing ILM policy {}: {}", path, describe_failure(r)), true, failure_of(r));
    degrade(fmt::format(
        "ILM {} ({}): templates go without index.lifecycle.name, so indices are not deleted "
        "after {} days",
        api_absent(r) ? "is not available on this server" : "refused the retention policy", describe_failure(r), days));
    return true;
  }

  // ISM policies are documents: PUT creates, and an existing one answers 409.
  // Then salttap updates it (GET for its _seq_no/_primary_term, PUT with
  // if_seq_no/if_primary_term) so a changed retention_days takes effect for
  // new indices; a 409 on that update means another salttap wrote it in
  // between, which counts as installed.
  bool install_ism(int days) {
    const std::string body = ism_policy_body(days, layout_, kIndexKinds);
    std::vector<std::string> roots = {"/_plugins/_ism"};
    // OpenSearch 1.x also answers on the Open Distro path; 1.x is the one
    // where a cluster may only have the old plugin.
    if (report_.server.version.major <= 1) roots.emplace_back("/_opendistro/_ism");
    http::HttpResponse last;
    for (const auto& root : roots) {
      const std::string path = fmt::format("{}/policies/{}", root, lifecycle_policy_name(layout_));
      last = send("PUT", path, body);
      if (ok(last)) return installed(LifecycleApi::ism, "PUT " + path);
      if (last.status == 409) return update_ism(path, body, days);
      if (transient(last))
        return fail(fmt::format("installing ISM policy {}: {}", path, describe_failure(last)), true, failure_of(last));
      if (!api_absent(last)) break;
    }
    degrade(fmt::format("ISM {} ({}): indices are not deleted after {} days",
                        api_absent(last) ? "is not available on this server" : "refused the retention policy",
                        describe_failure(last), days));
    return true;
  }

  bool update_ism(const std::string& path, const std::string& body, int days) {
    const http::HttpResponse current = send("GET", path);
    rapidjson::Document doc;
    doc.Parse(current.body.data(), current.body.size());
    const auto* seq_no = ok(current) && !doc.HasParseError() ? member(doc, "_seq_no") : nullptr;
    const auto* primary_term = ok(current) && !doc.HasParseError() ? member(doc, "_primary_term") : nullptr;
    if (!seq_no || !primary_term || !seq_no->IsInt64() || !primary_term->IsInt64()) {
      if (transient(current))
        return fail(fmt::format("reading ISM policy {}: {}", path, describe_failure(current)), true,
                    failure_of(current));
      degrade(
          fmt::format("ISM policy {} exists but could not be read for an update ({}); it is left as it is, "
                      "which may not delete after {} days",
                      path, describe_failure(current), days));
      return true;
    }
    const std::string update =
        fmt::format("{}?if_seq_no={}&if_primary_term={}", path, seq_no->GetInt64(), primary_term->GetInt64());
    const http::HttpResponse r = send("PUT", update, body);
    if (ok(r) || r.status == 409) return installed(LifecycleApi::ism, "PUT " + update);
    if (transient(r))
      return fail(fmt::format("updating ISM policy {}: {}", path, describe_failure(r)), true, failure_of(r));
    degrade(
        fmt::format("ISM refused the update of policy {} ({}); the existing policy stays, which may not "
                    "delete after {} days",
                    path, describe_failure(r), days));
    return true;
  }

  bool installed(LifecycleApi api, std::string what) {
    report_.lifecycle = api;
    report_.installed.push_back(std::move(what));
    return true;
  }

  bool install_template(std::string_view kind) {
    TemplateOptions options;
    options.api = report_.template_api;
    // Entities are replaced in place, never aged out: no retention policy.
    options.lifecycle_policy =
        report_.lifecycle == LifecycleApi::ilm && !is_entity_kind(kind) ? lifecycle_policy_name(layout_) : "";
    const std::string path = template_path(layout_, kind, options.api);
    for (;;) {
      const bool with_flat = !report_.flat_type.empty() && has_flat_field(kind);
      options.flat_type = report_.flat_type;
      const http::HttpResponse r = send("PUT", path, template_body(kind, layout_, settings_, options));
      if (ok(r)) {
        report_.installed.push_back("PUT " + path);
        return true;
      }
      // The server does not know the whole-object type (an Elasticsearch
      // without x-pack before 7.13, an OpenSearch before 2.7 hiding its
      // version): map the rest and leave `return_flat` out.
      if (with_flat && r.status == 400 && (contains(r.body, report_.flat_type) || contains(r.body, "return_flat"))) {
        degrade(
            fmt::format("{} refused the field type {} ({}): return_flat is left out of the mapping and "
                        "of documents",
                        report_.server.describe(), report_.flat_type, engine_error_reason(r.body)));
        report_.flat_type.clear();
        continue;
      }
      if (r.status == 401 || r.status == 403)
        return fail(fmt::format("installing template {}: {}; the configured user needs the manage_index_templates "
                                "privilege (Elasticsearch) or cluster:admin/indices/template/* (OpenSearch)",
                                path, describe_failure(r)),
                    false, SetupFailure::http_auth);
      return fail(fmt::format("installing template {}: {}", path, describe_failure(r)), transient(r), failure_of(r));
    }
  }

  http::HttpClient& http_;
  const IndexLayout& layout_;
  const TemplateSettings& settings_;
  IndexSetupReport report_;
};

}  // namespace

std::string_view to_string(SetupFailure f) { return enumerator_name(f, "unknown"); }

std::string engine_error_reason(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (!doc.HasParseError()) {
    if (const auto* error = member(doc, "error")) {
      if (error->IsString()) return error->GetString();
      // root_cause[0] names the exception that matters; the top-level one
      // may wrap it ("template after composition is invalid"), and is added
      // only when it says more than the root cause.
      const auto* causes = member(*error, "root_cause");
      const rapidjson::Value* root = causes && causes->IsArray() && !causes->Empty() ? &(*causes)[0] : nullptr;
      std::string out = root ? type_and_reason(*root) : "";
      if (out.empty()) return type_and_reason(*error);
      const std::string top_reason = json::string_member(*error, "reason");
      if (!top_reason.empty() && top_reason.find(json::string_member(*root, "reason")) == std::string::npos)
        out += " (in " + type_and_reason(*error) + ")";
      return out;
    }
  }
  constexpr std::size_t kMax = 300;
  std::string out(body.substr(0, kMax));
  if (body.size() > kMax) out += "…";
  return out;
}

IndexSetupReport install_index_setup(http::HttpClient& http, const IndexLayout& layout,
                                     const TemplateSettings& settings, bool states_index) {
  return Setup(http, layout, settings).run(states_index);
}

}  // namespace salttap::indexer
