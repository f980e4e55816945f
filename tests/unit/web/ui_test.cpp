// The job browser without a browser or an engine: routing of every /ui/
// path, the JSON API against a fake engine (the searches it sends, what it
// answers, every engine problem), basic auth (constant-time compare, every
// malformed header refused), the service's answers (pages, assets, 401,
// 405, hardening headers) and the metrics it counts.

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/text.h"
#include "tests/support/fake_http.h"
#include "tests/support/search_json.h"
#include "web/auth.h"
#include "web/internal/api.h"
#include "web/internal/embedded_ui.h"
#include "web/job_browser.h"
#include "web/router.h"

namespace salttap {
namespace {

using testing::FakeHttp;

using testing::expect_row;
using testing::json_at;
using testing::parse_body;
using testing::search_hits;

constexpr Micros kNow = 1'764'445'535'000'000;  // 2025-11-29T19:45:35Z

const std::string kJobFailed =
    R"({"jid":"20251129194535000001","status":"failed","fun":"state.apply","tgt":"web*","user":"root",)"
    R"("started_at":"2025-11-29T19:45:35.000001Z","master":"salt-01","kind":"job","args_text":"[\"fail\"]",)"
    R"("settled_at":"2025-11-29T19:45:40.000001Z","states":{"total":3,"succeeded":1,"failed":2,"changed":0},)"
    R"("counts":{"expected":2,"returned":2,"succeeded":1,"failed":1,"missing":0},)"
    R"("risk":{"level":"medium","reasons":["state_run_without_test"]},)"
    R"("failed_states":[{"minion":"web1","id":"will_fail","function":"cmd.run","comment":"Command failed"}]})";
const std::string kReturnFailed =
    R"({"jid":"20251129194535000001","minion":"web1","fun":"state.apply","status":"failed","retcode":2,)"
    R"("job_started_at":"2025-11-29T19:45:35.000001Z","reason":"2 failed states",)"
    R"("return_text":"<script>alert(1)</script>","failed_state_ids":["will_fail"]})";
const std::string kReturnMissing = R"({"jid":"20251129194535000001","minion":"web2","status":"missing"})";
const std::string kAlert =
    R"({"@timestamp":"2025-11-29T19:45:40.000001Z","alert":"failed","kinds":["failed","risky"],)"
    R"("jid":"20251129194535000001","fun":"state.apply","user":"root","status":"failed","failed":["web1"],)"
    R"("missing":[],"risk":{"level":"medium"}})";

std::string minions_page(const std::string& minion, int jobs, int failed, int missing) {
  return R"({"_shards":{"total":1,"successful":1,"failed":0},"aggregations":{"minions":{"buckets":[)"
         R"({"key":{"minion":")" +
         minion + R"("},"doc_count":)" + std::to_string(jobs) + R"(,"succeeded":{"doc_count":)" +
         std::to_string(jobs - failed - missing) + R"(},"failed":{"doc_count":)" + std::to_string(failed) +
         R"(},"missing":{"doc_count":)" + std::to_string(missing) +
         R"(},"answered":{"last":{"value_as_string":"2025-11-29T19:45:36.000000Z"}}}]}}})";
}

const std::string kNoIndex =
    R"({"error":{"type":"index_not_found_exception","reason":"no such index [salt-jobs-*]"},"status":404})";

// ---- routing ---------------------------------------------------------------

TEST(UiRouter, EveryPathHasItsRoute) {
  using enum web::UiRoute;
  const std::pair<const char*, web::UiRoute> cases[] = {
      {"/ui/", page},
      {"/ui/?status=failed", page},
      {"/ui/minions", page},
      {"/ui/alerts?kind=risky", page},
      {"/ui/job/20251129194535000001", page},
      {"/ui/minion/web1", page},
      {"/ui/static/app.js", asset},
      {"/ui/api/jobs", api_jobs},
      {"/ui/api/jobs/123", api_job},
      {"/ui/api/minions?since=1d", api_minions},
      {"/ui/api/minions/web1", api_minion},
      {"/ui/api/alerts", api_alerts},
      {"/ui/nope", other},
      {"/ui/job/", other},
      {"/ui/job/a/b", other},
      {"/ui/api/jobs/a/b", other},
      {"/ui/static/", other},
      {"/ui/api", other},
      {"/ui/api/", other},
      {"/ui/static/../x", other},
  };
  for (const auto& [target, route] : cases) EXPECT_EQ(web::route_ui(target, false).route, route) << target;
}

TEST(UiRouter, RedirectsToTheSlashedRoot) {
  EXPECT_EQ(web::route_ui("/ui", false).route, web::UiRoute::redirect);
  EXPECT_EQ(web::route_ui("/ui", false).location, "/ui/");
  EXPECT_EQ(web::route_ui("/", true).route, web::UiRoute::redirect);
  EXPECT_EQ(web::route_ui("/", false).route, web::UiRoute::other);
}

TEST(UiRouter, DecodesArgumentsAndQueries) {
  const web::UiTarget t =
      web::route_ui("/ui/api/minions/web%2F1%20a?since=1d&fun=state.%2A&user=a+b&flag&x=%zz", false);
  EXPECT_EQ(t.route, web::UiRoute::api_minion);
  EXPECT_EQ(t.argument, "web/1 a");  // an escaped '/' stays in its segment
  EXPECT_EQ(t.query.at("since"), "1d");
  EXPECT_EQ(t.query.at("fun"), "state.*");
  EXPECT_EQ(t.query.at("user"), "a b");
  EXPECT_EQ(t.query.at("flag"), "");
  EXPECT_EQ(t.query.at("x"), "%zz");  // a bad escape stays as it is
  EXPECT_EQ(web::percent_decode("%4", false), "%4");
  EXPECT_EQ(web::percent_decode("a+b", false), "a+b");
}

// ---- auth -------------------------------------------------------------------

TEST(UiAuth, ConstantTimeEqualIsEquality) {
  EXPECT_TRUE(web::constant_time_equal("", ""));
  EXPECT_TRUE(web::constant_time_equal("secret", "secret"));
  EXPECT_FALSE(web::constant_time_equal("secret", "secreT"));
  EXPECT_FALSE(web::constant_time_equal("secret", "secret2"));
  EXPECT_FALSE(web::constant_time_equal("secret", ""));
  EXPECT_FALSE(web::constant_time_equal(std::string("a\0b", 3), "a"));
}

TEST(UiAuth, OpenWithoutAUsername) {
  const web::UiAuth open;
  EXPECT_FALSE(open.required());
  EXPECT_TRUE(open.allows(""));
  EXPECT_TRUE(open.allows("Basic garbage"));
}

TEST(UiAuth, BasicCredentialsOnly) {
  const web::UiAuth auth("admin", "s3cr:et");
  EXPECT_TRUE(auth.required());
  EXPECT_TRUE(auth.allows("Basic " + base64_encode("admin:s3cr:et")));  // a password may hold ':'
  EXPECT_TRUE(auth.allows("basic  " + base64_encode("admin:s3cr:et") + " "));
  for (const std::string& bad :
       {std::string(), std::string("Basic"), std::string("Basic "), "Bearer " + base64_encode("admin:s3cr:et"),
        "Basic " + base64_encode("admin:s3cr"), "Basic " + base64_encode("admin"), "Basic " + base64_encode(":"),
        "Basic " + base64_encode("Admin:s3cr:et"), "Basic " + base64_encode("admin:s3cr:et "),
        std::string("Basic !!!!")})
    EXPECT_FALSE(auth.allows(bad)) << bad;
}

// ---- the API ----------------------------------------------------------------

TEST(UiApi, JobsSendsTheJobsSearchWithEveryFilter) {
  FakeHttp engine([](const http::HttpRequest&) { return FakeHttp::reply(200, search_hits({kJobFailed})); });
  auto client = engine.client();
  const WebResponse r = web::ui_api_jobs(
      *client, {}, {{"status", "failed"}, {"fun", "state.*"}, {"minion", "web1"}, {"user", "root"}, {"since", "1d"}},
      kNow);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json; charset=utf-8");
  const auto requests = engine.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/salt-jobs-*/_search");
  const auto q = parse_body(requests[0].body);
  EXPECT_EQ(json_at(q, "/size"), "100");
  EXPECT_EQ(json_at(q, "/query/bool/filter/0/term/status/value"), "failed");
  EXPECT_EQ(json_at(q, "/query/bool/filter/1/wildcard/fun/value"), "state.*");
  EXPECT_EQ(json_at(q, "/query/bool/filter/2/term/user/value"), "root");
  EXPECT_EQ(json_at(q, "/query/bool/filter/3/bool/should/0/term/minions.expected/value"), "web1");
  EXPECT_EQ(json_at(q, "/query/bool/filter/4/range/started_at/gte"), std::to_string((kNow - 86'400'000'000) / 1000));
  const auto d = parse_body(r.body);
  expect_row(
      d, "/jobs/0",
      {{"jid", "20251129194535000001"}, {"status", "failed"}, {"failed", "1"}, {"expected", "2"}, {"risk", "medium"}});
  EXPECT_EQ(json_at(d, "/jobs/1"), "<absent>");
}

TEST(UiApi, JobsRefusesWhatItCannotRead) {
  FakeHttp engine;
  auto client = engine.client();
  for (const web::UiQuery& bad : std::vector<web::UiQuery>{{{"status", "weird"}},
                                                           {{"since", "yesterday"}},
                                                           {{"since", "1h"}, {"until", "2h"}},
                                                           {{"risk", "extreme"}},
                                                           {{"limit", "0"}},
                                                           {{"limit", "1001"}},
                                                           {{"limit", "12abc"}}}) {
    const WebResponse r = web::ui_api_jobs(*client, {}, bad, kNow);
    EXPECT_EQ(r.status, 400) << bad.begin()->first;
    const auto d = parse_body(r.body);
    EXPECT_NE(json_at(d, "/error"), "<absent>");
    EXPECT_EQ(json_at(d, "/error").find("--"), std::string::npos) << json_at(d, "/error");
  }
  EXPECT_TRUE(engine.requests().empty());  // nothing is asked of the engine for a bad filter
}

TEST(UiApi, EngineProblemsAreA502OrAnEmptyListWithANote) {
  FakeHttp engine([](const http::HttpRequest&) { return FakeHttp::reply(0); });
  auto client = engine.client();
  std::FILE* log_file = std::tmpfile();
  log::set_output(log_file);
  WebResponse r = web::ui_api_jobs(*client, {}, {}, kNow);
  log::set_output(nullptr);
  EXPECT_EQ(r.status, 502);
  // The browser gets a fixed message and an id; the engine's words, with its address, are in the log under that id.
  const std::string id = json_at(parse_body(r.body), "/error_id");
  EXPECT_EQ(id.size(), 16u) << r.body;
  EXPECT_EQ(r.body.find("cannot reach"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("fake"), std::string::npos) << r.body;
  std::string logged(4096, '\0');
  std::rewind(log_file);
  logged.resize(std::fread(logged.data(), 1, logged.size(), log_file));
  std::fclose(log_file);
  EXPECT_NE(logged.find("engine error " + id + ": cannot reach the engine"), std::string::npos) << logged;
  engine.set_respond([](const http::HttpRequest&) {
    return FakeHttp::reply(401, R"({"error":{"type":"security_exception","reason":"no"}})");
  });
  EXPECT_EQ(web::ui_api_alerts(*client, {}, {}, kNow).status, 502);
  engine.set_respond([](const http::HttpRequest&) { return FakeHttp::reply(404, kNoIndex); });
  r = web::ui_api_jobs(*client, {}, {}, kNow);
  EXPECT_EQ(r.status, 200);
  const auto d = parse_body(r.body);
  EXPECT_TRUE(d["jobs"].Empty());
  EXPECT_EQ(json_at(d, "/note"), "the engine holds no salttap indices yet");
  engine.set_respond([](const http::HttpRequest&) { return FakeHttp::reply(200, "not json"); });
  EXPECT_EQ(web::ui_api_minions(*client, {}, {}, kNow).status, 502);
}

TEST(UiApi, JobShowsEveryMinionWithItsFailedStates) {
  FakeHttp engine([](const http::HttpRequest& req) {
    if (req.path.starts_with("/salt-jobs-")) return FakeHttp::reply(200, search_hits({kJobFailed}));
    return FakeHttp::reply(200, search_hits({kReturnFailed, kReturnMissing}));
  });
  auto client = engine.client();
  const WebResponse r = web::ui_api_job(*client, {}, "20251129194535000001");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto requests = engine.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(json_at(parse_body(requests[0].body), "/query/bool/filter/0/term/jid"), "20251129194535000001");
  EXPECT_EQ(requests[1].path, "/salt-returns-*/_search");
  EXPECT_EQ(json_at(parse_body(requests[1].body), "/query/bool/filter/1/terms/master/0"), "salt-01");
  const auto d = parse_body(r.body);
  expect_row(d, "/job",
             {{"status", "failed"},
              {"args_text", "[\"fail\"]"},
              {"settled_at", "2025-11-29T19:45:40.000001Z"},
              {"states/failed", "2"},
              {"reasons/0", "state_run_without_test"},
              {"failed_states/0/id", "will_fail"}});
  expect_row(d, "/returns/0",
             {{"minion", "web1"},
              {"retcode", "2"},
              {"return_text", "<script>alert(1)</script>"},  // JSON; the page shows it as text
              {"failed_states/0/comment", "Command failed"}});
  expect_row(d, "/returns/1",
             {{"minion", "web2"}, {"status", "missing"}, {"retcode", "null"}, {"failed_states/0", "<absent>"}});
  EXPECT_EQ(json_at(d, "/returns_total"), "2");
}

// docs/masters.md: the job's documents of one fleet, merged; each minion's best return.
TEST(UiApi, AJobOfTwoMastersIsOneJobSeenByBoth) {
  const std::string m1 = R"({"jid":"20251129194535000001","status":"missing","fun":"test.ping","user":"root",)"
                         R"("started_at":"2025-11-29T19:45:35.000001Z","master":"m1","fleet":"f1","kind":"job",)"
                         R"("args_text":"[]","minions":{"expected":["web1","web2"],"succeeded":["web1"],)"
                         R"("missing":["web2"]},"counts":{"expected":2,"succeeded":1,"missing":1}})";
  const std::string m2 = R"({"jid":"20251129194535000001","status":"succeeded","fun":"test.ping","user":"",)"
                         R"("started_at":"2025-11-29T19:45:35.500000Z","master":"m2","fleet":"f1","kind":"orphan",)"
                         R"("args_text":"[]","minions":{"succeeded":["web1","web2"]},"counts":{"succeeded":2}})";
  FakeHttp engine([&](const http::HttpRequest& req) {
    if (req.path.starts_with("/salt-jobs-")) return FakeHttp::reply(200, search_hits({m2, m1}));
    return FakeHttp::reply(
        200, search_hits({R"({"minion":"web1","status":"succeeded","master":"m1"})",
                          R"({"minion":"web1","status":"succeeded","master":"m2"})",
                          R"({"minion":"web2","status":"missing","master":"m1"})",
                          R"({"minion":"web2","status":"succeeded","master":"m2","return_text":"true"})"}));
  });
  auto client = engine.client();
  const WebResponse r = web::ui_api_job(*client, {}, "20251129194535000001");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto returns_query = parse_body(engine.requests().at(1).body);
  EXPECT_EQ(json_at(returns_query, "/query/bool/filter/1/terms/master/0"), "m1");
  EXPECT_EQ(json_at(returns_query, "/query/bool/filter/1/terms/master/1"), "m2");
  const auto d = parse_body(r.body);
  expect_row(d, "/job",
             {{"status", "succeeded"},
              {"user", "root"},
              {"publisher", "m1"},
              {"fleet", "f1"},
              {"seen_by/0", "m1"},
              {"seen_by/1", "m2"},
              {"expected", "2"},
              {"succeeded", "2"},
              {"missing", "0"}});
  EXPECT_EQ(json_at(d, "/masters"), "2");
  EXPECT_EQ(json_at(d, "/jobs_with_this_jid"), "1");
  expect_row(d, "/returns/1",
             {{"minion", "web2"}, {"status", "succeeded"}, {"return_text", "true"}, {"seen_by/0", "m2"}});
  expect_row(d, "/returns/0", {{"minion", "web1"}, {"seen_by/0", "m1"}, {"seen_by/1", "m2"}});
}

TEST(UiApi, AnUnknownJobIsA404) {
  FakeHttp engine([](const http::HttpRequest&) { return FakeHttp::reply(200, search_hits({})); });
  auto client = engine.client();
  EXPECT_EQ(web::ui_api_job(*client, {}, "20251129194535999999").status, 404);
  engine.set_respond([](const http::HttpRequest&) { return FakeHttp::reply(404, kNoIndex); });
  EXPECT_EQ(web::ui_api_job(*client, {}, "20251129194535999999").status, 404);
  EXPECT_EQ(web::ui_api_job(*client, {}, std::string(300, '1')).status, 400);
}

TEST(UiApi, MinionsAreFlakyFirstWithAFailureRate) {
  FakeHttp engine([](const http::HttpRequest&) {
    return FakeHttp::reply(
        200,
        R"({"_shards":{"total":1,"successful":1,"failed":0},"aggregations":{"minions":{"buckets":[)"
        R"({"key":{"minion":"good"},"doc_count":10,"succeeded":{"doc_count":10},"failed":{"doc_count":0},"missing":{"doc_count":0}},)"
        R"({"key":{"minion":"bad"},"doc_count":4,"succeeded":{"doc_count":1},"failed":{"doc_count":2},"missing":{"doc_count":1}}]}}})");
  });
  auto client = engine.client();
  const WebResponse r = web::ui_api_minions(*client, {}, {{"since", "all"}}, kNow);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json_at(parse_body(engine.requests().at(0).body), "/query"), "<absent>");  // all: no time filter
  const auto d = parse_body(r.body);
  EXPECT_EQ(json_at(d, "/minions/0/minion"), "bad");
  EXPECT_DOUBLE_EQ(d["minions"][0]["failure_rate"].GetDouble(), 0.75);
  EXPECT_EQ(json_at(d, "/minions/1/minion"), "good");
  EXPECT_DOUBLE_EQ(d["minions"][1]["failure_rate"].GetDouble(), 0.0);
  EXPECT_EQ(web::ui_api_minions(*client, {}, {{"since", "soon"}}, kNow).status, 400);
}

TEST(UiApi, MinionHasItsCountsAndItsReturns) {
  FakeHttp engine([](const http::HttpRequest& req) {
    if (req.body.find("composite") != std::string::npos) return FakeHttp::reply(200, minions_page("web1", 4, 1, 1));
    return FakeHttp::reply(200, search_hits({kReturnFailed}));
  });
  auto client = engine.client();
  const WebResponse r = web::ui_api_minion(*client, {}, "web1", {{"limit", "20"}}, kNow);
  ASSERT_EQ(r.status, 200) << r.body;
  const auto requests = engine.requests();
  ASSERT_EQ(requests.size(), 2u);
  const auto stats = parse_body(requests[0].body);
  EXPECT_EQ(json_at(stats, "/query/bool/filter/1/term/minion"), "web1");
  EXPECT_EQ(json_at(stats, "/query/bool/filter/0/range/job_started_at/gte"),
            std::to_string((kNow - 7 * 86'400'000'000 - 35'000'000) / 1000));  // 7 days by default, whole minute
  const auto returns = parse_body(requests[1].body);
  EXPECT_EQ(json_at(returns, "/size"), "20");
  EXPECT_EQ(json_at(returns, "/query/bool/filter/0/term/minion"), "web1");
  EXPECT_EQ(json_at(returns, "/sort/0/job_started_at/order"), "desc");
  const auto d = parse_body(r.body);
  EXPECT_EQ(json_at(d, "/minion/minion"), "web1");
  EXPECT_EQ(json_at(d, "/minion/jobs"), "4");
  EXPECT_DOUBLE_EQ(d["minion"]["failure_rate"].GetDouble(), 0.5);
  expect_row(d, "/returns/0",
             {{"jid", "20251129194535000001"},
              {"fun", "state.apply"},
              {"failed_state_ids/0", "will_fail"},
              {"return_text", "<absent>"}});  // the history needs no outputs
}

TEST(UiApi, AlertsFilterByKind) {
  FakeHttp engine([](const http::HttpRequest&) { return FakeHttp::reply(200, search_hits({kAlert})); });
  auto client = engine.client();
  const WebResponse r = web::ui_api_alerts(*client, {}, {{"kind", "risky"}, {"since", "all"}}, kNow);
  ASSERT_EQ(r.status, 200) << r.body;
  const auto requests = engine.requests();
  EXPECT_EQ(requests.at(0).path, "/salt-alerts-*/_search");
  const auto q = parse_body(requests.at(0).body);
  EXPECT_EQ(json_at(q, "/query/bool/filter/0/term/kinds"), "risky");
  EXPECT_EQ(json_at(q, "/sort/0/@timestamp/order"), "desc");
  const auto d = parse_body(r.body);
  expect_row(d, "/alerts/0", {{"jid", "20251129194535000001"}, {"kinds/1", "risky"}, {"failed/0", "web1"}});
  EXPECT_EQ(web::ui_api_alerts(*client, {}, {{"kind", "everything"}}, kNow).status, 400);
}

// ---- the service ------------------------------------------------------------

struct Browser {
  FakeHttp engine{[](const http::HttpRequest&) { return FakeHttp::reply(200, search_hits({kJobFailed})); }};
  ManualClock clock{kNow};
  web::UiService ui;
  explicit Browser(web::UiAuth auth = {}, bool root_redirect = false)
      : ui(engine.factory(), indexer::IndexLayout{}, std::move(auth), clock, root_redirect) {}
  std::optional<WebResponse> get(std::string target, std::string authorization = {}, std::string method = "GET") {
    return ui.handle(WebRequest{std::move(method), std::move(target), std::move(authorization), {}, {}, {}});
  }
};

std::string header(const WebResponse& r, std::string_view name) {
  for (const auto& [n, v] : r.headers)
    if (n == name) return v;
  return "<absent>";
}

TEST(UiService, ServesThePageTheAssetsAndTheApi) {
  Browser b;
  for (const char* page : {"/ui/", "/ui/job/1", "/ui/minion/web1", "/ui/minions", "/ui/alerts"}) {
    const auto r = b.get(page);
    ASSERT_TRUE(r) << page;
    EXPECT_EQ(r->status, 200) << page;
    EXPECT_EQ(r->content_type, "text/html; charset=utf-8");
    EXPECT_NE(r->body.find("/ui/static/app.js"), std::string::npos);
  }
  const auto js = b.get("/ui/static/app.js");
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(b.get("/ui/static/app.css")->content_type, "text/css; charset=utf-8");
  EXPECT_EQ(b.get("/ui/static/nothing.js")->status, 404);
  EXPECT_EQ(b.get("/ui/static/index.html")->status, 404);  // the page has its own paths
  const auto api = b.get("/ui/api/jobs?status=failed");
  EXPECT_EQ(api->status, 200);
  EXPECT_EQ(json_at(parse_body(api->body), "/jobs/0/jid"), "20251129194535000001");
  EXPECT_EQ(b.get("/ui/elsewhere")->status, 404);
  EXPECT_EQ(b.get("/ui")->status, 301);
  EXPECT_EQ(header(*b.get("/ui"), "Location"), "/ui/");
}

TEST(UiService, EveryEmbeddedFileIsServedOrIsThePage) {
  Browser b;
  ASSERT_FALSE(web::embedded_ui_files().empty());
  for (const EmbeddedFile& f : web::embedded_ui_files()) {
    if (f.name == "index.html") continue;
    const auto r = b.get("/ui/static/" + std::string(f.name));
    EXPECT_EQ(r->status, 200) << f.name;
    EXPECT_EQ(r->body, f.text);
  }
}

TEST(UiService, LeavesOtherPathsAlone) {
  Browser b;
  EXPECT_FALSE(b.get("/metrics"));
  EXPECT_FALSE(b.get("/"));
  EXPECT_FALSE(b.get("/uix"));
  Browser standalone({}, true);
  EXPECT_EQ(standalone.get("/")->status, 301);
  EXPECT_FALSE(standalone.get("/metrics"));
}

TEST(UiService, EveryAnswerIsHardened) {
  Browser b;
  for (const char* target : {"/ui/", "/ui/static/app.js", "/ui/api/jobs", "/ui/nothing"}) {
    const auto r = b.get(target);
    EXPECT_NE(header(*r, "Content-Security-Policy").find("script-src 'self'"), std::string::npos) << target;
    EXPECT_EQ(header(*r, "Content-Security-Policy").find("unsafe"), std::string::npos) << target;
    EXPECT_EQ(header(*r, "X-Content-Type-Options"), "nosniff") << target;
    EXPECT_EQ(header(*r, "X-Frame-Options"), "DENY") << target;
  }
}

TEST(UiService, OnlyGetAndHead) {
  Browser b;
  const auto post = b.get("/ui/api/jobs", "", "POST");
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(header(*post, "Allow"), "GET, HEAD");
  const auto head = b.get("/ui/", "", "HEAD");
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
  EXPECT_TRUE(b.engine.requests().empty());
}

TEST(UiService, BasicAuthGuardsEverything) {
  Browser b(web::UiAuth("admin", "pw"));
  const std::string good = "Basic " + base64_encode("admin:pw");
  for (const char* target : {"/ui/", "/ui/static/app.js", "/ui/api/jobs", "/ui/api/jobs/1", "/ui/nothing", "/ui"}) {
    const auto r = b.get(target);
    EXPECT_EQ(r->status, 401) << target;
    EXPECT_EQ(header(*r, "WWW-Authenticate"), web::UiAuth::kChallenge);
    EXPECT_EQ(b.get(target, "Basic " + base64_encode("admin:wrong"))->status, 401) << target;
  }
  EXPECT_TRUE(b.engine.requests().empty());  // nothing reaches the engine unauthenticated
  EXPECT_EQ(b.get("/ui/", good)->status, 200);
  EXPECT_EQ(b.get("/ui/api/jobs", good)->status, 200);
}

TEST(UiService, CountsRequestsAndTimesApiCalls) {
  Browser b(web::UiAuth("admin", "pw"));
  const std::string good = "Basic " + base64_encode("admin:pw");
  b.get("/ui/", good);
  b.get("/ui/", good);
  b.get("/ui/api/jobs", good);
  b.get("/ui/api/jobs?status=bogus", good);
  b.get("/ui/api/alerts");
  b.get("/ui/api/jobs", good, "DELETE");
  b.get("/ui/gone", good);
  EXPECT_EQ(b.ui.metrics().requests(web::UiRoute::page, 200), 2u);
  EXPECT_EQ(b.ui.metrics().requests(web::UiRoute::api_jobs, 200), 1u);
  EXPECT_EQ(b.ui.metrics().requests(web::UiRoute::api_jobs, 400), 1u);
  EXPECT_EQ(b.ui.metrics().requests(web::UiRoute::api_alerts, 401), 1u);
  EXPECT_EQ(b.ui.metrics().requests(web::UiRoute::api_jobs, 405), 1u);
  EXPECT_EQ(b.ui.metrics().requests(web::UiRoute::other, 404), 1u);
  Metrics m;
  b.ui.metrics().publish(m);
  const std::string text = m.render();
  EXPECT_NE(text.find("salttap_ui_requests_total{route=\"page\",status=\"200\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("salttap_ui_api_request_duration_seconds_count{route=\"api_jobs\"} 2\n"), std::string::npos)
      << text;  // answered calls are timed, refused ones (401, 405) are not
  EXPECT_NE(text.find("salttap_ui_api_request_duration_seconds_bucket{route=\"api_jobs\",le=\"+Inf\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("salttap_ui_api_request_duration_seconds_count{route=\"api_alerts\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE salttap_ui_api_request_duration_seconds histogram\n"), std::string::npos);
}

TEST(UiMetrics, HistogramBucketsAreCumulative) {
  web::UiMetrics metrics;
  metrics.api_latency(web::UiRoute::api_job, 0.001);
  metrics.api_latency(web::UiRoute::api_job, 0.2);
  metrics.api_latency(web::UiRoute::api_job, 60);
  metrics.api_latency(web::UiRoute::page, 1);  // not an API call: not timed
  Metrics m;
  metrics.publish(m);
  const std::string text = m.render();
  const auto bucket = [](const char* le, int n) {
    return "salttap_ui_api_request_duration_seconds_bucket{route=\"api_job\",le=\"" + std::string(le) + "\"} " +
           std::to_string(n) + "\n";
  };
  EXPECT_NE(text.find(bucket("0.005", 1)), std::string::npos) << text;
  EXPECT_NE(text.find(bucket("0.1", 1)), std::string::npos);
  EXPECT_NE(text.find(bucket("0.25", 2)), std::string::npos);
  EXPECT_NE(text.find(bucket("10", 2)), std::string::npos);
  EXPECT_NE(text.find(bucket("+Inf", 3)), std::string::npos);
  EXPECT_NE(text.find("salttap_ui_api_request_duration_seconds_sum{route=\"api_job\"} 60.201\n"), std::string::npos);
}

}  // namespace
}  // namespace salttap
