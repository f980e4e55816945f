// install_index_setup against a scripted fake engine: which requests go out,
// in which order, and what degrades when the server lacks something.

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include "indexer/index_setup.h"

namespace salttap::indexer {
namespace {

constexpr const char* kEs8 = R"({"name":"es01","version":{"number":"8.15.3","build_flavor":"default",
  "lucene_version":"9.11.1"},"tagline":"You Know, for Search"})";
constexpr const char* kEs717 = R"({"name":"node-1","version":{"number":"7.17.29","build_flavor":"default",
  "build_type":"tar","lucene_version":"8.11.3"},"tagline":"You Know, for Search"})";
constexpr const char* kEs76 = R"({"name":"n","version":{"number":"7.6.2","build_flavor":"default",
  "lucene_version":"8.4.0"},"tagline":"You Know, for Search"})";
constexpr const char* kOs219 = R"({"name":"node-1","version":{"distribution":"opensearch","number":"2.19.6",
  "lucene_version":"9.12.3"},"tagline":"The OpenSearch Project: https://opensearch.org/"})";
constexpr const char* kOs13 = R"({"name":"n","version":{"distribution":"opensearch","number":"1.3.20",
  "lucene_version":"8.10.1"},"tagline":"The OpenSearch Project: https://opensearch.org/"})";

// Recorded from the test engines (tests/engines).
constexpr const char* kIlmAbsentEs717 =
    R"({"error":{"root_cause":[{"type":"invalid_index_name_exception","reason":"Invalid index name [_ilm], must not start with '_', '-', or '+'","index_uuid":"_na_","index":"_ilm"}],"type":"invalid_index_name_exception","reason":"Invalid index name [_ilm], must not start with '_', '-', or '+'","index_uuid":"_na_","index":"_ilm"},"status":400})";
constexpr const char* kNoHandlerFlattened =
    R"({"error":{"root_cause":[{"type":"mapper_parsing_exception","reason":"No handler for type [flattened] declared on field [return_flat]"}],"type":"mapper_parsing_exception","reason":"Failed to parse mapping [_doc]: No handler for type [flattened] declared on field [return_flat]","caused_by":{"type":"mapper_parsing_exception","reason":"No handler for type [flattened] declared on field [return_flat]"}},"status":400})";

http::HttpResponse reply(long status, std::string body = R"({"acknowledged":true})") {
  http::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.host = "http://engine:9200";
  return r;
}

http::HttpResponse no_handler(const http::HttpRequest& q) {
  return reply(400, R"({"error":"no handler found for uri [)" + q.path + "] and method [" + q.method + R"(]"})");
}

// Answers by route (method + path without the query); the first matching
// route wins, anything else gets the engines' "no handler found" 400.
class ScriptedEngine : public http::HttpClient {
 public:
  using Handler = std::function<http::HttpResponse(const http::HttpRequest&)>;
  struct Route {
    std::string method, path;  // path "" matches any; a trailing '*' matches a prefix
    Handler handler;
  };

  ScriptedEngine(std::string banner, std::string product = {}) {
    on("GET", "/", [banner, product](const http::HttpRequest&) {
      http::HttpResponse r = reply(200, banner);
      r.product = product;
      return r;
    });
  }
  ScriptedEngine& on(std::string method, std::string path, Handler handler) {
    routes_.push_back({std::move(method), std::move(path), std::move(handler)});
    return *this;
  }
  ScriptedEngine& on(std::string method, std::string path, http::HttpResponse response) {
    return on(std::move(method), std::move(path), [response](const http::HttpRequest&) { return response; });
  }

  http::HttpResponse send(const http::HttpRequest& request) override {
    requests.push_back(request);
    const std::string path = request.path.substr(0, request.path.find('?'));
    for (const auto& route : routes_) {
      if (route.method != request.method) continue;
      const bool prefix = !route.path.empty() && route.path.back() == '*';
      if (route.path.empty() || route.path == path ||
          (prefix && path.starts_with(std::string_view(route.path).substr(0, route.path.size() - 1))))
        return route.handler(request);
    }
    return no_handler(request);
  }

  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& q : requests) out.push_back(q.method + " " + q.path);
    return out;
  }
  const http::HttpRequest& request_to(std::string_view path) const {
    for (const auto& q : requests)
      if (q.path == path) return q;
    throw std::runtime_error("no request to " + std::string(path));
  }

  std::vector<http::HttpRequest> requests;

 private:
  std::vector<Route> routes_;
};

rapidjson::Document parse(const std::string& body) {
  rapidjson::Document d;
  d.Parse(body.c_str());
  EXPECT_FALSE(d.HasParseError()) << body;
  return d;
}

const rapidjson::Value* at(const rapidjson::Document& d, const char* pointer) {
  return rapidjson::Pointer(pointer).Get(d);
}

std::vector<std::string> template_lines(std::string_view api, bool states = true) {
  std::vector<std::string> out;
  for (const auto kind : kIndexKinds)
    if (states || kind != "states") out.push_back(fmt::format("PUT /{}/salt-{}", api, kind));
  for (const auto kind : kEntityKinds) out.push_back(fmt::format("PUT /{}/salt-{}", api, kind));
  return out;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TemplateSettings retention(int days) {
  TemplateSettings s;
  s.retention_days = days;
  return s;
}

TEST(IndexSetup, ComposablePathWithIlmOnElasticsearch8) {
  ScriptedEngine es(kEs8, "Elasticsearch");
  es.on("PUT", "/_ilm/policy/salt-retention", reply(200)).on("PUT", "/_index_template/*", reply(200));
  const auto report = install_index_setup(es, IndexLayout{}, retention(30), true);

  ASSERT_TRUE(report.ok) << report.error;
  EXPECT_EQ(es.lines(), concat({"GET /", "PUT /_ilm/policy/salt-retention"}, template_lines("_index_template")));
  EXPECT_EQ(report.server.flavor, Flavor::elasticsearch);
  EXPECT_EQ(report.template_api, TemplateApi::composable);
  EXPECT_EQ(report.lifecycle, LifecycleApi::ilm);
  EXPECT_EQ(report.flat_type, "flattened");
  EXPECT_TRUE(report.degraded.empty());
  EXPECT_TRUE(return_flat_enabled(report));
  EXPECT_EQ(report.installed.size(), 8u);

  const auto policy = parse(es.request_to("/_ilm/policy/salt-retention").body);
  EXPECT_STREQ(at(policy, "/policy/phases/delete/min_age")->GetString(), "30d");

  const auto returns = parse(es.request_to("/_index_template/salt-returns").body);
  EXPECT_STREQ(at(returns, "/index_patterns/0")->GetString(), "salt-returns-*");
  EXPECT_EQ(at(returns, "/priority")->GetInt(), 200);
  EXPECT_EQ(at(returns, "/template/settings/index.number_of_shards")->GetInt(), 1);
  EXPECT_EQ(at(returns, "/template/settings/index.number_of_replicas")->GetInt(), 0);
  EXPECT_TRUE(at(returns, "/template/settings/index.mapping.ignore_malformed")->GetBool());
  EXPECT_STREQ(at(returns, "/template/settings/index.lifecycle.name")->GetString(), "salt-retention");
  EXPECT_EQ(at(returns, "/template/settings/index.refresh_interval"), nullptr) << "the engine's own unless asked";
  const auto jobs = parse(es.request_to("/_index_template/salt-jobs").body);
  EXPECT_STREQ(at(jobs, "/template/settings/index.refresh_interval")->GetString(), "500ms")
      << "the jobs index is searchable sooner than the engine's 1 s";
  // The bulk of the bytes, read a few documents at a time: stored compressed harder
  // (docs/benchmarks.md, the cost of the record); the lists' jobs keep the default.
  for (const char* kind : {"returns", "states", "events"}) {
    const auto t = parse(es.request_to(std::string("/_index_template/salt-") + kind).body);
    EXPECT_STREQ(at(t, "/template/settings/index.codec")->GetString(), "best_compression") << kind;
  }
  EXPECT_EQ(at(jobs, "/template/settings/index.codec"), nullptr);
  EXPECT_FALSE(at(returns, "/template/mappings/dynamic")->GetBool());
  EXPECT_STREQ(at(returns, "/template/mappings/properties/return_flat/type")->GetString(), "flattened");
  EXPECT_EQ(at(returns, "/template/mappings/properties/return_flat/depth_limit")->GetInt(), 20);
  for (const auto& q : es.requests) EXPECT_EQ(q.content_type, "application/json");

  // The entity index: one undated index, never aged out by the retention policy.
  const auto minions = parse(es.request_to("/_index_template/salt-minions").body);
  EXPECT_STREQ(at(minions, "/index_patterns/0")->GetString(), "salt-minions");
  EXPECT_EQ(at(minions, "/template/settings/index.lifecycle.name"), nullptr);
  EXPECT_STREQ(at(minions, "/template/mappings/properties/last_highstate/properties/jid/type")->GetString(), "keyword");
}

TEST(IndexSetup, LegacyTemplatesBeforeElasticsearch78) {
  ScriptedEngine es(kEs76);
  es.on("PUT", "/_template/*", reply(200));
  TemplateSettings settings;
  settings.number_of_replicas = 2;
  settings.refresh_interval = "250ms";
  const auto report = install_index_setup(es, IndexLayout{}, settings, true);

  ASSERT_TRUE(report.ok) << report.error;
  EXPECT_EQ(es.lines(), concat({"GET /"}, template_lines("_template")));
  EXPECT_EQ(report.template_api, TemplateApi::legacy);
  EXPECT_EQ(report.lifecycle, LifecycleApi::none);  // no retention asked for: no policy request
  const auto jobs = parse(es.request_to("/_template/salt-jobs").body);
  EXPECT_EQ(at(jobs, "/order")->GetInt(), 200);
  EXPECT_EQ(at(jobs, "/priority"), nullptr);
  EXPECT_EQ(at(jobs, "/template"), nullptr);
  EXPECT_EQ(at(jobs, "/settings/index.number_of_replicas")->GetInt(), 2);
  EXPECT_STREQ(at(jobs, "/settings/index.refresh_interval")->GetString(), "250ms");
  EXPECT_EQ(at(jobs, "/settings/index.lifecycle.name"), nullptr);
  EXPECT_STREQ(at(jobs, "/mappings/properties/jid/type")->GetString(), "keyword");
}

TEST(IndexSetup, FlatTypeRefusedRetriesWithoutReturnFlat) {
  ScriptedEngine es(kEs717, "Elasticsearch");
  es.on("PUT", "/_index_template/salt-returns", [](const http::HttpRequest& q) {
    return q.body.find("flattened") != std::string::npos ? reply(400, kNoHandlerFlattened) : reply(200);
  });
  es.on("PUT", "/_index_template/*", reply(200));
  const auto report = install_index_setup(es, IndexLayout{}, TemplateSettings{}, true);

  ASSERT_TRUE(report.ok) << report.error;
  EXPECT_EQ(es.lines(),
            (std::vector<std::string>{"GET /", "PUT /_index_template/salt-jobs", "PUT /_index_template/salt-returns",
                                      "PUT /_index_template/salt-returns", "PUT /_index_template/salt-states",
                                      "PUT /_index_template/salt-events", "PUT /_index_template/salt-alerts",
                                      "PUT /_index_template/salt-deadletter", "PUT /_index_template/salt-minions"}));
  EXPECT_EQ(es.requests[3].body.find("return_flat"), std::string::npos);
  EXPECT_NE(es.requests[3].body.find("return_text"), std::string::npos);
  EXPECT_EQ(report.flat_type, "");
  EXPECT_FALSE(return_flat_enabled(report));
  ASSERT_EQ(report.degraded.size(), 1u);
  EXPECT_NE(report.degraded[0].find("No handler for type [flattened]"), std::string::npos) << report.degraded[0];
  EXPECT_NE(report.degraded[0].find("return_flat is left out"), std::string::npos) << report.degraded[0];
}

TEST(IndexSetup, IlmAbsentInstallsTemplatesWithoutLifecycle) {
  ScriptedEngine es(kEs717, "Elasticsearch");
  es.on("PUT", "/_ilm/policy/salt-retention", reply(400, kIlmAbsentEs717)).on("PUT", "/_index_template/*", reply(200));
  const auto report = install_index_setup(es, IndexLayout{}, retention(7), true);

  ASSERT_TRUE(report.ok) << report.error;
  EXPECT_EQ(report.lifecycle, LifecycleApi::none);
  ASSERT_EQ(report.degraded.size(), 1u);
  EXPECT_NE(report.degraded[0].find("ILM is not available"), std::string::npos) << report.degraded[0];
  EXPECT_NE(report.degraded[0].find("7 days"), std::string::npos) << report.degraded[0];
  for (const auto& q : es.requests) EXPECT_EQ(q.body.find("index.lifecycle.name"), std::string::npos) << q.path;
  EXPECT_EQ(report.installed, template_lines("_index_template"));
}

TEST(IndexSetup, IlmRefusedForPrivilegesAlsoDegrades) {
  ScriptedEngine es(kEs8, "Elasticsearch");
  es.on("PUT", "/_ilm/policy/salt-retention",
        reply(403,
              R"({"error":{"type":"security_exception","reason":"action [cluster:admin/ilm/put] is unauthorized"}})"))
      .on("PUT", "/_index_template/*", reply(200));
  const auto report = install_index_setup(es, IndexLayout{}, retention(7), true);
  ASSERT_TRUE(report.ok) << report.error;
  ASSERT_EQ(report.degraded.size(), 1u);
  EXPECT_NE(report.degraded[0].find("refused"), std::string::npos);
  EXPECT_NE(report.degraded[0].find("unauthorized"), std::string::npos);
}

TEST(IndexSetup, IsmOnOpenSearch2) {
  ScriptedEngine os(kOs219);
  os.on("PUT", "/_plugins/_ism/policies/salt-retention", reply(201, R"({"_id":"salt-retention","_version":1})"))
      .on("PUT", "/_index_template/*", reply(200));
  const auto report = install_index_setup(os, IndexLayout{}, retention(30), true);

  ASSERT_TRUE(report.ok) << report.error;
  EXPECT_EQ(report.lifecycle, LifecycleApi::ism);
  EXPECT_EQ(report.flat_type, "flat_object");
  const auto policy = parse(os.request_to("/_plugins/_ism/policies/salt-retention").body);
  EXPECT_STREQ(at(policy, "/policy/states/0/transitions/0/conditions/min_index_age")->GetString(), "30d");
  const auto* patterns = at(policy, "/policy/ism_template/0/index_patterns");
  ASSERT_TRUE(patterns && patterns->IsArray());
  ASSERT_EQ(patterns->Size(), std::size(kIndexKinds));
  EXPECT_STREQ((*patterns)[0].GetString(), "salt-jobs-*");
  EXPECT_STREQ((*patterns)[5].GetString(), "salt-deadletter-*");
  // ISM attaches by ism_template: templates carry no lifecycle setting.
  const auto returns = parse(os.request_to("/_index_template/salt-returns").body);
  EXPECT_EQ(at(returns, "/template/settings/index.lifecycle.name"), nullptr);
  EXPECT_STREQ(at(returns, "/template/mappings/properties/return_flat/type")->GetString(), "flat_object");
  EXPECT_EQ(at(returns, "/template/mappings/properties/return_flat/depth_limit"), nullptr);
}

TEST(IndexSetup, IsmAbsentOnOpenSearch2DegradesAfterOneTry) {
  ScriptedEngine os(kOs219);
  os.on("PUT", "/_index_template/*", reply(200));  // ISM: the default "no handler found" 400
  const auto report = install_index_setup(os, IndexLayout{}, retention(30), true);

  ASSERT_TRUE(report.ok) << report.error;
  EXPECT_EQ(os.lines(),
            concat({"GET /", "PUT /_plugins/_ism/policies/salt-retention"}, template_lines("_index_template")));
  EXPECT_EQ(report.lifecycle, LifecycleApi::none);
  ASSERT_EQ(report.degraded.size(), 1u);
  EXPECT_NE(report.degraded[0].find("ISM is not available"), std::string::npos) << report.degraded[0];
  EXPECT_TRUE(return_flat_enabled(report));
}

TEST(IndexSetup, IsmOnOpenSearch1FallsBackToTheOpenDistroPath) {
  ScriptedEngine os(kOs13);
  os.on("PUT", "/_opendistro/_ism/policies/salt-retention", reply(201, "{}"))
      .on("PUT", "/_index_template/*", reply(200));
  const auto report = install_index_setup(os, IndexLayout{}, retention(14), true);

  ASSERT_TRUE(report.ok) << report.error;
  EXPECT_EQ(os.lines(), concat({"GET /", "PUT /_plugins/_ism/policies/salt-retention",
                                "PUT /_opendistro/_ism/policies/salt-retention"},
                               template_lines("_index_template")));
  EXPECT_EQ(report.lifecycle, LifecycleApi::ism);
  EXPECT_EQ(report.flat_type, "");  // no flat_object before 2.7
  EXPECT_FALSE(return_flat_enabled(report));
  EXPECT_EQ(os.request_to("/_index_template/salt-returns").body.find("return_flat"), std::string::npos);
}

TEST(IndexSetup, IsmAbsentOnOpenSearch1TriesBothPaths) {
  ScriptedEngine os(kOs13);
  os.on("PUT", "/_index_template/*", reply(200));
  const auto report = install_index_setup(os, IndexLayout{}, retention(14), true);
  ASSERT_TRUE(report.ok) << report.error;
  EXPECT_EQ(os.lines()[2], "PUT /_opendistro/_ism/policies/salt-retention");
  ASSERT_EQ(report.degraded.size(), 1u);
  EXPECT_NE(report.degraded[0].find("ISM is not available"), std::string::npos);
}

TEST(IndexSetup, ExistingIsmPolicyIsUpdatedWithSeqNoAndPrimaryTerm) {
  ScriptedEngine os(kOs219);
  os.on("PUT", "/_plugins/_ism/policies/salt-retention",
        [](const http::HttpRequest& q) {
          return q.path.find("if_seq_no=") == std::string::npos
                     ? reply(
                           409,
                           R"json({"error":{"root_cause":[{"type":"version_conflict_engine_exception","reason":"[salt-retention]: version conflict, document already exists (current version [1])"}],"type":"version_conflict_engine_exception","reason":"[salt-retention]: version conflict, document already exists (current version [1])"},"status":409}))json")
                     : reply(200, R"({"_id":"salt-retention","_version":2})");
        })
      .on("GET", "/_plugins/_ism/policies/salt-retention",
          reply(
              200,
              R"({"_id":"salt-retention","_version":1,"_seq_no":7,"_primary_term":3,"policy":{"policy_id":"salt-retention"}})"))
      .on("PUT", "/_index_template/*", reply(200));
  const auto report = install_index_setup(os, IndexLayout{}, retention(30), true);

  ASSERT_TRUE(report.ok) << report.error;
  EXPECT_EQ(os.lines(),
            concat({"GET /", "PUT /_plugins/_ism/policies/salt-retention", "GET /_plugins/_ism/policies/salt-retention",
                    "PUT /_plugins/_ism/policies/salt-retention?if_seq_no=7&if_primary_term=3"},
                   template_lines("_index_template")));
  EXPECT_EQ(report.lifecycle, LifecycleApi::ism);
  EXPECT_TRUE(report.degraded.empty());
  EXPECT_EQ(os.requests[3].body, os.requests[1].body);
}

TEST(IndexSetup, UnauthorizedIsAClearErrorAndNothingElseIsSent) {
  struct Unauthorized : http::HttpClient {
    int calls = 0;
    http::HttpResponse send(const http::HttpRequest&) override {
      ++calls;
      return reply(
          401, R"({"error":{"type":"security_exception","reason":"missing authentication credentials"},"status":401})");
    }
  } engine;
  const auto report = install_index_setup(engine, IndexLayout{}, retention(30), true);
  EXPECT_FALSE(report.ok);
  EXPECT_FALSE(report.retryable);
  EXPECT_EQ(engine.calls, 1);
  EXPECT_NE(report.error.find("401"), std::string::npos) << report.error;
  EXPECT_NE(report.error.find("requires authentication"), std::string::npos) << report.error;
  EXPECT_EQ(report.failure, SetupFailure::http_auth);
  EXPECT_FALSE(return_flat_enabled(report));
}

TEST(IndexSetup, IdempotentSecondRunSendsTheSameRequests) {
  ScriptedEngine es(kEs8, "Elasticsearch");
  es.on("PUT", "/_ilm/policy/salt-retention", reply(200)).on("PUT", "/_index_template/*", reply(200));
  const auto first = install_index_setup(es, IndexLayout{}, retention(30), true);
  const auto sent_first = es.requests;
  es.requests.clear();
  const auto second = install_index_setup(es, IndexLayout{}, retention(30), true);
  ASSERT_TRUE(first.ok && second.ok);
  ASSERT_EQ(es.requests.size(), sent_first.size());
  for (std::size_t i = 0; i < sent_first.size(); ++i) {
    EXPECT_EQ(es.requests[i].method, sent_first[i].method);
    EXPECT_EQ(es.requests[i].path, sent_first[i].path);
    EXPECT_EQ(es.requests[i].body, sent_first[i].body) << es.requests[i].path;
  }
  EXPECT_EQ(first.installed, second.installed);
}

TEST(IndexSetup, StatesTemplateOnlyWithTheStatesIndex) {
  ScriptedEngine es(kEs8, "Elasticsearch");
  es.on("PUT", "/_index_template/*", reply(200));
  const auto report = install_index_setup(es, IndexLayout{}, TemplateSettings{}, false);
  ASSERT_TRUE(report.ok);
  EXPECT_EQ(es.lines(), concat({"GET /"}, template_lines("_index_template", false)));
}

TEST(IndexSetup, PrefixAndUndatedIndicesShapeNamesAndPatterns) {
  ScriptedEngine es(kEs8, "Elasticsearch");
  es.on("PUT", "/_index_template/*", reply(200));
  IndexLayout layout;
  layout.prefix = "ops";
  layout.index_date = false;
  ASSERT_TRUE(install_index_setup(es, layout, TemplateSettings{}, true).ok);
  const auto jobs = parse(es.request_to("/_index_template/ops-jobs").body);
  EXPECT_STREQ(at(jobs, "/index_patterns/0")->GetString(), "ops-jobs");
}

TEST(IndexSetup, RefusedTemplateFailsWithTheEngineReason) {
  ScriptedEngine es(kEs8, "Elasticsearch");
  es.on("PUT", "/_index_template/salt-states",
        reply(
            400,
            R"({"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"index template [salt-states] has index patterns [salt-states-*] matching patterns from existing templates [other] with patterns (other => [salt-*]) that have the same priority [200]"}],"type":"illegal_argument_exception","reason":"index template [salt-states] has index patterns ..."},"status":400})"))
      .on("PUT", "/_index_template/*", reply(200));
  const auto report = install_index_setup(es, IndexLayout{}, TemplateSettings{}, true);
  EXPECT_FALSE(report.ok);
  EXPECT_FALSE(report.retryable);
  EXPECT_NE(report.error.find("/_index_template/salt-states"), std::string::npos) << report.error;
  EXPECT_NE(report.error.find("same priority [200]"), std::string::npos) << report.error;
  EXPECT_EQ(es.lines().back(), "PUT /_index_template/salt-states");  // stops there; the caller retries later
}

TEST(IndexSetup, ForbiddenTemplateNamesThePrivilege) {
  ScriptedEngine es(kEs8, "Elasticsearch");
  es.on(
      "PUT", "/_index_template/*",
      reply(
          403,
          R"({"error":{"type":"security_exception","reason":"action [indices:admin/index_template/put] is unauthorized"},"status":403})"));
  const auto report = install_index_setup(es, IndexLayout{}, TemplateSettings{}, true);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.error.find("manage_index_templates"), std::string::npos) << report.error;
}

// An engine no request reaches: each one ends in `failure`, with no answer.
struct Unreachable : http::HttpClient {
  http::HttpResponse failure;
  http::HttpResponse send(const http::HttpRequest&) override { return failure; }
};

TEST(IndexSetup, UnreachableOrOverloadedIsRetryable) {
  Unreachable down;
  down.failure.host = "http://engine:9200";
  down.failure.error = "Connection refused";
  const auto report = install_index_setup(down, IndexLayout{}, TemplateSettings{}, true);
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(report.retryable);
  EXPECT_NE(report.error.find("Connection refused"), std::string::npos);
  EXPECT_EQ(report.failure, SetupFailure::transport);

  ScriptedEngine busy(kEs8, "Elasticsearch");
  busy.on("PUT", "/_index_template/*",
          reply(503, R"({"error":{"type":"cluster_block_exception","reason":"blocked"}})"));
  const auto r2 = install_index_setup(busy, IndexLayout{}, TemplateSettings{}, true);
  EXPECT_FALSE(r2.ok);
  EXPECT_TRUE(r2.retryable);
  EXPECT_EQ(r2.failure, SetupFailure::http_error);
}

TEST(IndexSetup, ATlsFailureIsRetryableAndCountedAsTls) {
  Unreachable engine;  // its CA is not one the client trusts
  engine.failure.host = "https://engine:9200";
  engine.failure.error =
      "https://engine:9200: TLS failed: SSL certificate problem: unable to get local issuer certificate";
  engine.failure.tls_failed = true;
  const auto report = install_index_setup(engine, IndexLayout{}, TemplateSettings{}, true);
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(report.retryable) << "a certificate can be fixed while salttap waits";
  EXPECT_EQ(report.failure, SetupFailure::tls);
  EXPECT_NE(report.error.find("TLS failed: SSL certificate problem"), std::string::npos) << report.error;
  EXPECT_EQ(to_string(report.failure), "tls");
}

TEST(IndexSetup, NotAnEngineIsAnError) {
  ScriptedEngine web("<html>hello</html>");
  const auto report = install_index_setup(web, IndexLayout{}, TemplateSettings{}, true);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.error.find("banner"), std::string::npos) << report.error;
  EXPECT_EQ(web.requests.size(), 1u);
}

TEST(IndexSetup, HiddenOpenSearchVersionTriesFlatObject) {
  ScriptedEngine os(
      R"({"version":{"number":"7.10.2","lucene_version":"9.4.2"},"tagline":"The OpenSearch Project: https://opensearch.org/"})");
  // OpenSearch 2.4 hiding its version: flat_object unknown there.
  os.on("PUT", "/_index_template/salt-returns", [](const http::HttpRequest& q) {
      return q.body.find("flat_object") != std::string::npos
                 ? reply(
                       400,
                       R"({"error":{"root_cause":[{"type":"mapper_parsing_exception","reason":"No handler for type [flat_object] declared on field [return_flat]"}],"type":"mapper_parsing_exception","reason":"No handler for type [flat_object] declared on field [return_flat]"},"status":400})")
                 : reply(200);
    }).on("PUT", "/_index_template/*", reply(200));
  const auto report = install_index_setup(os, IndexLayout{}, TemplateSettings{}, true);
  ASSERT_TRUE(report.ok) << report.error;
  EXPECT_TRUE(report.server.version_hidden);
  EXPECT_EQ(report.flat_type, "");
  EXPECT_EQ(report.degraded.size(), 1u);
}

TEST(IndexSetup, EngineErrorReason) {
  EXPECT_EQ(engine_error_reason(kNoHandlerFlattened),
            "mapper_parsing_exception: No handler for type [flattened] declared on field [return_flat]");
  EXPECT_EQ(engine_error_reason(R"({"error":{"root_cause":[{"type":"mapper_parsing_exception","reason":"bad"}],
                                   "type":"illegal_argument_exception","reason":"template after composition is invalid"}})"),
            "mapper_parsing_exception: bad (in illegal_argument_exception: template after composition is invalid)");
  EXPECT_EQ(engine_error_reason(R"({"error":"no handler found for uri [/x] and method [PUT]"})"),
            "no handler found for uri [/x] and method [PUT]");
  EXPECT_EQ(engine_error_reason("plain text"), "plain text");
  EXPECT_EQ(engine_error_reason(std::string(400, 'x')).size(), 300u + std::string("…").size());
}

}  // namespace
TEST(TemplateSettings, TheJobsIndexRefreshesEveryHalfSecondUnlessTold) {
  TemplateSettings s;
  EXPECT_EQ(s.refresh_interval_for("jobs"), "500ms");
  EXPECT_EQ(s.refresh_interval_for("returns"), "");
  s.refresh_interval = "250ms";  // the low-latency setting covers the jobs index too
  EXPECT_EQ(s.refresh_interval_for("jobs"), "250ms");
  EXPECT_EQ(s.refresh_interval_for("events"), "250ms");
  s.jobs_refresh_interval = "100ms";
  EXPECT_EQ(s.refresh_interval_for("jobs"), "100ms");
  EXPECT_EQ(s.refresh_interval_for("returns"), "250ms");
  s.jobs_refresh_interval = "";  // null in the config: the engine's own
  EXPECT_EQ(s.refresh_interval_for("jobs"), "");
}

}  // namespace salttap::indexer
