// What the job browser checks before it reads anything for a request: the
// Host allow-list (DNS rebinding), the Origin of API calls, UTF-8 of every
// path segment and parameter; and the service's answers to each (421, 403,
// 400 naming the parameter) before any search reaches the engine.

#include <gtest/gtest.h>

#include "common/clock.h"
#include "tests/support/fake_http.h"
#include "web/job_browser.h"
#include "web/request_guard.h"
#include "web/router.h"

namespace salttap {
namespace {

using web::HostAllowList;

TEST(HostAllowList, LocalhostIpLiteralsTheListenHostAndConfiguredNames) {
  const HostAllowList hosts("127.0.0.1:9109", {"salt-master.example", "UI.Example."});
  for (const char* ok : {"localhost", "localhost:9109", "LOCALHOST", "127.0.0.1:9109", "127.0.0.1", "[::1]:9109",
                         "10.1.2.3:80", "salt-master.example:9109", "ui.example", "ui.example.:1", ""})
    EXPECT_TRUE(hosts.allows(ok)) << ok;
  for (const char* bad : {"attacker.example", "attacker.example:9109", "localhost.attacker.example",
                          "salt-master.example.attacker.example", "[::1", "a b", "evil@127.0.0.1", "127.0.0.1.nip.io"})
    EXPECT_FALSE(hosts.allows(bad)) << bad;
  EXPECT_FALSE(HostAllowList().allows("salt-master.example")) << "a name only when configured";
}

TEST(HostAllowList, HostNameOfAnAuthority) {
  EXPECT_EQ(web::host_name_of("Example.COM:80"), "example.com");
  EXPECT_EQ(web::host_name_of("[::1]:9109"), "::1");
  EXPECT_EQ(web::host_name_of("[::1]x"), "");
  EXPECT_EQ(web::host_name_of("a/b"), "");
}

WebRequest api_request(std::string host, std::string origin, std::string site = {}) {
  return WebRequest{"GET", "/ui/api/jobs", "", std::move(host), std::move(origin), std::move(site)};
}

TEST(SameOrigin, NoOriginOrTheSameOneOnly) {
  EXPECT_TRUE(web::same_origin(api_request("127.0.0.1:9109", "")));
  EXPECT_TRUE(web::same_origin(api_request("127.0.0.1:9109", "http://127.0.0.1:9109")));
  EXPECT_TRUE(web::same_origin(api_request("127.0.0.1:9109", "", "same-origin")));
  EXPECT_TRUE(web::same_origin(api_request("127.0.0.1:9109", "", "none")));
  EXPECT_FALSE(web::same_origin(api_request("127.0.0.1:9109", "http://attacker.example")));
  EXPECT_FALSE(web::same_origin(api_request("127.0.0.1:9109", "http://127.0.0.1:9110")));
  EXPECT_FALSE(web::same_origin(api_request("127.0.0.1:9109", "null")));
  EXPECT_FALSE(web::same_origin(api_request("127.0.0.1:9109", "", "cross-site")));
  EXPECT_FALSE(web::same_origin(api_request("127.0.0.1:9109", "", "same-site")));
}

TEST(Utf8Check, NamesThePartThatIsNotUtf8) {
  EXPECT_EQ(web::invalid_utf8_part(web::route_ui("/ui/api/jobs?fun=test.%FF&user=x", false)), "fun");
  EXPECT_EQ(web::invalid_utf8_part(web::route_ui("/ui/api/jobs/%C0%AF", false)), "path");
  EXPECT_EQ(web::invalid_utf8_part(web::route_ui("/ui/api/jobs?%FF=1", false)), "a parameter name");
  EXPECT_EQ(web::invalid_utf8_part(web::route_ui("/ui/api/jobs?fun=%ED%A0%80", false)), "fun") << "a surrogate";
  EXPECT_EQ(web::invalid_utf8_part(web::route_ui("/ui/api/jobs?fun=caf%C3%A9%0A&minion=*", false)), std::nullopt);
}

class Guarded : public ::testing::Test {
 protected:
  WebResponse get(std::string target, std::string host = "127.0.0.1:9109", std::string origin = {}) {
    return *ui_.handle(WebRequest{"GET", std::move(target), "", std::move(host), std::move(origin), ""});
  }
  testing::FakeHttp engine_{[](const http::HttpRequest&) { return testing::FakeHttp::reply(200, "{}"); }};
  ManualClock clock_{0};
  web::UiService ui_{[this] { return engine_.client(); }, {}, {}, clock_, true, HostAllowList("127.0.0.1:9109", {})};
};

TEST_F(Guarded, RefusesBeforeAskingTheEngine) {
  EXPECT_EQ(get("/ui/api/jobs", "attacker.example:9109").status, 421);
  EXPECT_EQ(get("/ui/", "attacker.example").status, 421);
  EXPECT_EQ(get("/ui/api/jobs", "127.0.0.1:9109", "http://attacker.example").status, 403);
  const WebResponse bad = get("/ui/api/jobs?minion=%FF");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body, R"({"error":"minion is not valid UTF-8"})");
  EXPECT_EQ(get("/ui/api/minions/%FF").status, 400);
  EXPECT_TRUE(engine_.requests().empty());
  EXPECT_EQ(ui_.metrics().requests(web::UiRoute::api_jobs, 421), 1u);
  EXPECT_EQ(ui_.metrics().requests(web::UiRoute::api_jobs, 403), 1u);
  // A page may be reached from a link on another site (a bookmark shared in a chat): only API calls need the origin.
  EXPECT_EQ(get("/ui/", "127.0.0.1:9109", "http://wiki.example").status, 200);
}

}  // namespace
}  // namespace salttap
