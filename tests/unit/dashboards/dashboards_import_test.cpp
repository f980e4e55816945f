// `salttap setup --dashboards`: the saved objects prepared for another index
// prefix (the committed exports of both products), the multipart body, the
// import request against a fake Kibana / Dashboards, and every answer's exit
// code and message.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "dashboards/dashboards_import.h"
#include "dashboards/saved_objects.h"
#include "tests/support/fake_http.h"
#include "tests/support/log_capture.h"
#include "tests/support/temp_output.h"

namespace salttap {
namespace {

using testing::FakeHttp;
using testing::LogCapture;
using testing::TempOutput;
namespace fs = std::filesystem;

const fs::path kSource = SALTTAP_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    const auto eol = text.find('\n', at);
    out.push_back(text.substr(at, eol - at));
    at = eol == std::string::npos ? text.size() : eol + 1;
  }
  return out;
}

rapidjson::Document parse(const std::string& line) {
  rapidjson::Document d;
  d.Parse(line.c_str());
  EXPECT_FALSE(d.HasParseError()) << line;
  return d;
}

std::string title_of(const rapidjson::Document& d) { return d["attributes"]["title"].GetString(); }

class Exports : public ::testing::TestWithParam<const char*> {};

TEST_P(Exports, DefaultPrefixSendsTheFileAsItIs) {
  const std::string text = read(kSource / "deploy" / GetParam() / "salttap.ndjson");
  const dashboards::SavedObjects s = dashboards::prepare_saved_objects(text, "salt");
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.ndjson, text);
  EXPECT_EQ(s.objects, 16u);
  EXPECT_EQ(s.index_patterns, 5u);
}

TEST_P(Exports, AnotherPrefixRenamesOnlyTheIndexPatternTitles) {
  const std::string text = read(kSource / "deploy" / GetParam() / "salttap.ndjson");
  const dashboards::SavedObjects s = dashboards::prepare_saved_objects(text, "acme-prod");
  ASSERT_EQ(s.error, "");
  const auto before = lines(text), after = lines(s.ndjson);
  ASSERT_EQ(before.size(), after.size());
  std::vector<std::string> titles;
  for (std::size_t i = 0; i < before.size(); ++i) {
    const auto a = parse(before[i]);
    auto b = parse(after[i]);
    if (a.HasMember("type") && std::string(a["type"].GetString()) == "index-pattern") {
      titles.push_back(title_of(b));
      EXPECT_EQ(title_of(b), "acme-prod" + title_of(a).substr(4));
      EXPECT_EQ(std::string(b["id"].GetString()), a["id"].GetString());  // ids stay: a re-import replaces
      b["attributes"]["title"].SetString(title_of(a).c_str(), b.GetAllocator());
      EXPECT_TRUE(a == b) << "only the title changes: " << after[i];
    } else {
      EXPECT_EQ(after[i], before[i]) << "kept byte for byte";
    }
  }
  EXPECT_EQ(titles, (std::vector<std::string>{"acme-prod-jobs*", "acme-prod-returns*", "acme-prod-states*",
                                              "acme-prod-events*", "acme-prod-alerts*"}));
  EXPECT_EQ(s.ndjson.find("salt-"), std::string::npos) << "no other string names an index";
}

INSTANTIATE_TEST_SUITE_P(Products, Exports, ::testing::Values("kibana", "opensearch-dashboards"),
                         [](const auto& p) { return std::string(p.param[0] == 'k' ? "Kibana" : "Dashboards"); });

TEST(SavedObjects, BadLinesAreNamed) {
  EXPECT_EQ(
      dashboards::prepare_saved_objects("{\"type\":\"search\",\"id\":\"a\"}\n{oops\n", "salt").error.substr(0, 20),
      "line 2: not JSON (Mi");
  EXPECT_EQ(dashboards::prepare_saved_objects("[1,2]\n", "salt").error, "line 1: not a JSON object: [1,2]");
  EXPECT_EQ(dashboards::prepare_saved_objects("\n\n", "salt").error, "no saved objects in it (no line has a \"type\")");
  EXPECT_EQ(dashboards::prepare_saved_objects("", "salt").error, "no saved objects in it (no line has a \"type\")");
  // Without a prefix to apply, a title of its own is the operator's business.
  const std::string own = "{\"type\":\"index-pattern\",\"id\":\"x\",\"attributes\":{\"title\":\"logs-*\"}}\n";
  EXPECT_EQ(dashboards::prepare_saved_objects(own, "salt").error, "");
  EXPECT_EQ(dashboards::prepare_saved_objects(own, "acme").error,
            "line 1: index pattern x: its title does not start with \"salt-\", so the index prefix cannot be applied");
}

TEST(SavedObjects, CrLfLinesAndBlankLinesAreAccepted) {
  const dashboards::SavedObjects s = dashboards::prepare_saved_objects(
      "{\"type\":\"index-pattern\",\"id\":\"x\",\"attributes\":{\"title\":\"salt-jobs*\"}}\r\n\r\n{\"exportedCount\":"
      "1}",
      "p");
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(
      s.ndjson,
      "{\"type\":\"index-pattern\",\"id\":\"x\",\"attributes\":{\"title\":\"p-jobs*\"}}\n{\"exportedCount\":1}\n");
  EXPECT_EQ(s.objects, 1u);
}

TEST(Multipart, OneFilePartWithABoundaryNotInTheContent) {
  const std::string content = "{\"a\":1}\n{\"b\":2}\n";
  const dashboards::MultipartBody m =
      dashboards::multipart_file("file", "salttap.ndjson", "application/ndjson", content);
  const std::string prefix = "multipart/form-data; boundary=";
  ASSERT_TRUE(m.content_type.starts_with(prefix));
  const std::string boundary = m.content_type.substr(prefix.size());
  EXPECT_GE(boundary.size(), 30u);
  EXPECT_EQ(m.body, "--" + boundary +
                        "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"salttap.ndjson\"\r\n"
                        "Content-Type: application/ndjson\r\n\r\n" +
                        content + "\r\n--" + boundary + "--\r\n");
  EXPECT_NE(dashboards::multipart_file("file", "f", "t", content).content_type, m.content_type) << "random per body";
}

TEST(DashboardsProduct, FollowsTheEngine) {
  EXPECT_EQ(dashboards::dashboards_for(indexer::Flavor::elasticsearch).xsrf_header, "kbn-xsrf: true");
  EXPECT_EQ(dashboards::dashboards_for(indexer::Flavor::elasticsearch).export_dir, "kibana");
  EXPECT_EQ(dashboards::dashboards_for(indexer::Flavor::opensearch).xsrf_header, "osd-xsrf: true");
  EXPECT_EQ(dashboards::dashboards_for(indexer::Flavor::opensearch).export_dir, "opensearch-dashboards");
  EXPECT_EQ(dashboards::dashboards_for(indexer::Flavor::opensearch).name, "OpenSearch Dashboards");
}

TEST(SavedObjectsFile, InstalledDataFirstThenTheSourceTree) {
  const auto candidates = dashboards::saved_objects_candidates(dashboards::dashboards_for(indexer::Flavor::opensearch));
  ASSERT_GE(candidates.size(), 2u);
  EXPECT_TRUE(candidates.front().string().ends_with("share/salttap/dashboards/opensearch-dashboards/salttap.ndjson"));
  EXPECT_EQ(candidates.back(), kSource / "deploy" / "opensearch-dashboards" / "salttap.ndjson");
  const dashboards::SavedObjectsFile found =
      dashboards::find_saved_objects(candidates);  // a build tree: the source tree's
  ASSERT_EQ(found.error, "");
  EXPECT_EQ(found.text, read(candidates.back()));
}

TEST(SavedObjectsFile, WhatCannotBeReadIsNamed) {
  const fs::path dir = fs::temp_directory_path() / ("salttap-dash-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EXPECT_EQ(dashboards::read_saved_objects(dir / "none.ndjson").error,
            (dir / "none.ndjson").string() + ": No such file or directory");
  EXPECT_EQ(dashboards::read_saved_objects(dir).error, dir.string() + ": is a directory");
  EXPECT_EQ(dashboards::find_saved_objects({dir / "a", dir / "b"}).error,
            "no saved-objects export found (looked for " + (dir / "a").string() + ", " + (dir / "b").string() +
                "); name one with --dashboards-file");
  fs::remove_all(dir);
}

dashboards::DashboardsImport kibana_import() {
  return {"http://kibana.example:5601", "{\"type\":\"search\",\"id\":\"s1\"}\n", 1,
          dashboards::dashboards_for(indexer::Flavor::elasticsearch)};
}

struct Outcome {
  int code;
  std::string out, log;
};

Outcome run(FakeHttp& fake, const dashboards::DashboardsImport& import = kibana_import()) {
  LogCapture log;
  TempOutput out;
  auto client = fake.client();
  const int code = dashboards::import_dashboards(*client, import, out.file());
  return {code, out.text(), log.text()};
}

TEST(DashboardsImport, PostsTheFileAsMultipartWithTheXsrfHeader) {
  FakeHttp fake([](const http::HttpRequest&) {
    return FakeHttp::reply(200, R"({"success":true,"successCount":1,"successResults":[]})");
  });
  const Outcome o = run(fake);
  EXPECT_EQ(o.code, 0) << o.log;
  EXPECT_EQ(o.out, "dashboards: imported 1 of 1 objects into Kibana at http://kibana.example:5601\n");
  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 1u);
  const auto& r = requests[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/api/saved_objects/_import?overwrite=true");
  EXPECT_EQ(r.headers, std::vector<std::string>{"kbn-xsrf: true"});
  ASSERT_TRUE(r.content_type.starts_with("multipart/form-data; boundary="));
  const std::string boundary = r.content_type.substr(r.content_type.find('=') + 1);
  EXPECT_TRUE(r.body.starts_with("--" + boundary +
                                 "\r\nContent-Disposition: form-data; name=\"file\"; "
                                 "filename=\"salttap.ndjson\"\r\n"));
  EXPECT_NE(r.body.find("\r\n\r\n{\"type\":\"search\",\"id\":\"s1\"}\n\r\n--" + boundary + "--\r\n"),
            std::string::npos);
  EXPECT_FALSE(r.gzip);

  FakeHttp osd([](const http::HttpRequest&) { return FakeHttp::reply(200, R"({"success":true,"successCount":1})"); });
  dashboards::DashboardsImport to_osd = kibana_import();
  to_osd.product = dashboards::dashboards_for(indexer::Flavor::opensearch);
  EXPECT_EQ(run(osd, to_osd).code, 0);
  EXPECT_EQ(osd.requests().at(0).headers, std::vector<std::string>{"osd-xsrf: true"});
}

TEST(DashboardsImport, NoAnswerIsUnreachable) {
  FakeHttp fake([](const http::HttpRequest&) { return FakeHttp::reply(0); });
  const Outcome o = run(fake);
  EXPECT_EQ(o.code, dashboards::kDashboardsUnreachable);
  EXPECT_NE(o.log.find("no answer from Kibana at http://kibana.example:5601: http://fake: connection refused"),
            std::string::npos)
      << o.log;
  EXPECT_EQ(o.out, "");
}

TEST(DashboardsImport, RefusedCredentialsAreAnAuthError) {
  for (const long status : {401L, 403L}) {
    FakeHttp fake([status](const http::HttpRequest&) {
      return FakeHttp::reply(
          status,
          R"({"statusCode":401,"error":"Unauthorized","message":"[security_exception] missing authentication credentials"})");
    });
    const Outcome o = run(fake);
    EXPECT_EQ(o.code, dashboards::kDashboardsAuth) << status;
    EXPECT_NE(o.log.find(fmt::format("refused the credentials (HTTP {}: [security_exception] missing authentication "
                                     "credentials)",
                                     status)),
              std::string::npos)
        << o.log;
  }
}

TEST(DashboardsImport, OtherHttpErrorsAreRefusals) {
  struct Case {
    long status;
    std::string body;
    std::string logged;  // in the log ("": whatever it says)
  };
  const std::vector<Case> cases = {
      {400, R"({"statusCode":400,"error":"Bad Request","message":"Invalid file extension .txt"})",
       "answered HTTP 400: Invalid file extension .txt"},
      {404, "Not Found", "answered HTTP 404: Not Found; is http://kibana.example:5601 the base URL of Kibana"},
      {503, "", ""},
      // A 200 that is not the import API's answer (an engine, a login page).
      {200, R"({"name":"node-1"})",
       "answered HTTP 200 but not as the saved-objects import API does: {\"name\":\"node-1\"}"},
      {200, "<html>\nlogin</html>", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    FakeHttp fake([&c](const http::HttpRequest&) { return FakeHttp::reply(c.status, c.body); });
    const Outcome o = run(fake);
    EXPECT_EQ(o.code, dashboards::kDashboardsRefused);
    EXPECT_NE(o.log.find(c.logged), std::string::npos) << o.log;
  }
}

TEST(DashboardsImport, FailedObjectsAreEachNamed) {
  FakeHttp fake([](const http::HttpRequest&) {
    return FakeHttp::reply(200, R"({"success":false,"successCount":14,"errors":[
      {"id":"v1","type":"visualization","title":"Top failing minions","error":{"type":"missing_references",
        "references":[{"type":"index-pattern","id":"ip1"}]}},
      {"id":"d1","type":"dashboard","title":"Salt jobs","error":{"type":"unknown","message":"boom","statusCode":500}}]})");
  });
  dashboards::DashboardsImport import = kibana_import();
  import.objects = 16;
  const Outcome o = run(fake, import);
  EXPECT_EQ(o.code, dashboards::kDashboardsObjects);
  EXPECT_EQ(o.out, "");
  EXPECT_NE(o.log.find("imported 14 of 16 objects; 2 failed"), std::string::npos) << o.log;
  EXPECT_NE(o.log.find("visualization v1 (\"Top failing minions\"): missing_references; missing: index-pattern ip1"),
            std::string::npos)
      << o.log;
  EXPECT_NE(o.log.find("dashboard d1 (\"Salt jobs\"): unknown: boom"), std::string::npos) << o.log;
}

}  // namespace
}  // namespace salttap
