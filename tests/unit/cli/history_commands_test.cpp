// salttap jobs / jobs show / minions against a fake engine: the query each
// filter sends, the outputs (JSON lines as stored, tables that fit the
// width, colour only when asked), paging, and every engine problem's exit code.

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include "cli/internal/jobs_command.h"
#include "cli/internal/minions_command.h"
#include "common/text_table.h"
#include "history/search_response.h"
#include "tests/support/fake_http.h"
#include "tests/support/search_json.h"
#include "tests/support/temp_output.h"

namespace salttap {
namespace {

using testing::FakeHttp;

using testing::expect_row;
using testing::json_at;
using testing::parse_body;
using testing::search_hits;
using testing::TempOutput;

constexpr Micros kNow = 1'764'445'535'000'000;  // 2025-11-29T19:45:35Z

struct Captured {
  int code;
  std::string out;
};

template <typename Run>
Captured capture(Run run) {
  TempOutput out;
  const int code = run(out.file());
  return {code, out.text()};
}

const std::string kJobFailed =
    R"({"jid":"20251129194535000001","status":"failed","fun":"state.apply","tgt":"web*","user":"root",)"
    R"("started_at":"2025-11-29T19:45:35.000001Z","master":"salt-01","kind":"job","args_text":"[\"fail\"]",)"
    R"("counts":{"expected":2,"returned":2,"succeeded":1,"failed":1,"missing":0},"risk":{"level":"medium"},)"
    R"("failed_states":[{"minion":"web1","id":"will_fail","function":"cmd.run","comment":"Command failed"}]})";
const std::string kJobPing =
    R"({"jid":"20251129194000000002","status":"missing","fun":"test.ping","tgt":"*","user":"alice",)"
    R"("started_at":"2025-11-29T19:40:00.000002Z","counts":{"expected":2,"returned":1,"succeeded":1,)"
    R"("failed":0,"missing":1},"risk":{"level":"none"}})";

cli::HistoryOutput table(std::size_t width = 200, bool colour = false) { return {"table", width, colour}; }
cli::HistoryOutput json_lines() { return {"json", 100, false}; }

history::JobQuery query_of(const history::JobsArgs& args) {
  history::JobQuery q;
  std::string error;
  EXPECT_TRUE(history::make_job_query(args, kNow, q, error)) << error;
  return q;
}

std::string jobs_request(const history::JobsArgs& args) {
  FakeHttp http([](const http::HttpRequest&) { return FakeHttp::reply(200, search_hits({})); });
  auto client = http.client();
  capture(
      [&](std::FILE* f) { return cli::list_jobs(*client, indexer::IndexLayout{}, query_of(args), json_lines(), f); });
  const auto requests = http.requests();
  EXPECT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests.at(0).method, "POST");
  EXPECT_EQ(requests.at(0).path, "/salt-jobs-*/_search");
  return requests.at(0).body;
}

TEST(JobsQuery, NoFilterIsTheNewestFiftyJobs) {
  const auto d = parse_body(jobs_request({}));
  EXPECT_EQ(json_at(d, "/size"), "50");
  EXPECT_EQ(json_at(d, "/sort/0/started_at/order"), "desc");
  EXPECT_TRUE(rapidjson::Pointer("/query/bool/filter").Get(d)->Empty());
}

TEST(JobsQuery, EachFilterIsOneClause) {
  history::JobsArgs a;
  a.status = "failed";
  a.fun = "state.*";
  a.user = "alice";
  a.tgt = "web?";
  a.limit = 7;
  const auto d = parse_body(jobs_request(a));
  EXPECT_EQ(json_at(d, "/size"), "7");
  EXPECT_EQ(json_at(d, "/query/bool/filter/0/term/status/value"), "failed");
  EXPECT_EQ(json_at(d, "/query/bool/filter/1/wildcard/fun/value"), "state.*");
  EXPECT_EQ(json_at(d, "/query/bool/filter/2/term/user/value"), "alice");  // no glob: a term
  EXPECT_EQ(json_at(d, "/query/bool/filter/3/wildcard/tgt/value"), "web?");
  EXPECT_EQ(json_at(d, "/query/bool/filter/4"), "<absent>");
}

TEST(JobsQuery, MinionMatchesAnyOfTheJobsMinionLists) {
  history::JobsArgs a;
  a.minion = "web1";
  const auto d = parse_body(jobs_request(a));
  const auto* should = rapidjson::Pointer("/query/bool/filter/0/bool/should").Get(d);
  ASSERT_TRUE(should && should->IsArray());
  std::vector<std::string> fields;
  for (const auto& clause : should->GetArray()) fields.push_back(clause["term"].MemberBegin()->name.GetString());
  EXPECT_EQ(fields, (std::vector<std::string>{"minions.expected", "minions.succeeded", "minions.failed",
                                              "minions.missing", "minions.late"}));
  EXPECT_EQ(json_at(d, "/query/bool/filter/0/bool/minimum_should_match"), "1");
}

TEST(JobsQuery, RiskIsThatLevelOrAbove) {
  history::JobsArgs a;
  a.risk = "HIGH";
  const auto d = parse_body(jobs_request(a));
  EXPECT_EQ(json_at(d, "/query/bool/filter/0/terms/risk.level/0"), "high");
  EXPECT_EQ(json_at(d, "/query/bool/filter/0/terms/risk.level/1"), "critical");
  EXPECT_EQ(json_at(d, "/query/bool/filter/0/terms/risk.level/2"), "<absent>");
}

TEST(JobsQuery, SinceAndUntilAreAMillisecondRangeOnStartedAt) {
  history::JobsArgs a;
  a.since = "2h";
  a.until = "2025-11-29T19:00:00Z";
  const auto d = parse_body(jobs_request(a));
  EXPECT_EQ(json_at(d, "/query/bool/filter/0/range/started_at/gte"), std::to_string((kNow - 7'200'000'000) / 1000));
  EXPECT_EQ(json_at(d, "/query/bool/filter/0/range/started_at/lt"), "1764442800000");
  EXPECT_EQ(json_at(d, "/query/bool/filter/0/range/started_at/format"), "epoch_millis");
}

TEST(JobsQuery, BadOptionsAreRefusedBeforeAnyRequest) {
  const auto args = [](auto set) {
    history::JobsArgs a;
    set(a);
    return a;
  };
  for (const auto& [bad, expected] : std::vector<std::pair<history::JobsArgs, std::string>>{
           {args([](history::JobsArgs& a) { a.since = "yesterday"; }), "--since"},
           {args([](history::JobsArgs& a) { a.until = "2025-13-01"; }), "--until"},
           {args([](history::JobsArgs& a) { a.since = "1h", a.until = "2h"; }), "before --until"},
           {args([](history::JobsArgs& a) { a.risk = "extreme"; }), "--risk"},
           {args([](history::JobsArgs& a) { a.limit = 0; }), "--limit"},
           {args([](history::JobsArgs& a) { a.limit = 10001; }), "--limit"}}) {
    history::JobQuery q;
    std::string error;
    EXPECT_FALSE(history::make_job_query(bad, kNow, q, error));
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  }
}

TEST(JobsOutput, JsonIsEachSourceAsStoredNewestFirst) {
  FakeHttp http([](const http::HttpRequest&) { return FakeHttp::reply(200, search_hits({kJobFailed, kJobPing})); });
  auto client = http.client();
  const auto r =
      capture([&](std::FILE* f) { return cli::list_jobs(*client, indexer::IndexLayout{}, {}, json_lines(), f); });
  EXPECT_EQ(r.code, cli::kHistoryOk);
  EXPECT_EQ(r.out, kJobFailed + "\n" + kJobPing + "\n");
}

TEST(JobsOutput, TableFitsTheWidthAndShowsTheCounts) {
  FakeHttp http([](const http::HttpRequest&) { return FakeHttp::reply(200, search_hits({kJobFailed, kJobPing})); });
  auto client = http.client();
  for (const std::size_t width : {200u, 100u, 80u}) {
    const auto r =
        capture([&](std::FILE* f) { return cli::list_jobs(*client, indexer::IndexLayout{}, {}, table(width), f); });
    ASSERT_EQ(r.code, cli::kHistoryOk);
    EXPECT_EQ(r.out.find('\033'), std::string::npos) << "colour without a terminal";
    std::size_t lines = 0;
    for (std::size_t start = 0, end; (end = r.out.find('\n', start)) != std::string::npos; start = end + 1, ++lines)
      EXPECT_LE(display_width(std::string_view(r.out).substr(start, end - start)), width) << r.out;
    EXPECT_EQ(lines, 3u) << r.out;
    EXPECT_NE(r.out.find("20251129194535000001"), std::string::npos);
    EXPECT_NE(r.out.find("11-29 19:45:35"), std::string::npos);
    EXPECT_NE(r.out.find("state.apply"), std::string::npos) << "the function is cut last";
    if (width >= 100) {
      EXPECT_NE(r.out.find("medium"), std::string::npos) << r.out;
    }
    EXPECT_NE(r.out.find("1/2"), std::string::npos);
  }
}

TEST(JobsOutput, ColourMarksTheStatus) {
  FakeHttp http([](const http::HttpRequest&) { return FakeHttp::reply(200, search_hits({kJobFailed, kJobPing})); });
  auto client = http.client();
  const auto r =
      capture([&](std::FILE* f) { return cli::list_jobs(*client, indexer::IndexLayout{}, {}, table(200, true), f); });
  EXPECT_NE(r.out.find("\033[31mfailed\033[0m"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\033[33mmissing\033[0m"), std::string::npos) << r.out;
}

TEST(JobsErrors, EachEngineProblemHasItsExitCode) {
  const std::vector<std::pair<http::HttpResponse, int>> cases = {
      {FakeHttp::reply(0), cli::kHistoryEngine},
      {FakeHttp::reply(404, R"({"error":{"type":"index_not_found_exception","reason":"no such index [salt-jobs]"},)"
                            R"("status":404})"),
       cli::kHistoryNoIndices},
      {FakeHttp::reply(200, R"({"_shards":{"total":0,"successful":0,"failed":0},"hits":{"hits":[]}})"),
       cli::kHistoryNoIndices},
      {FakeHttp::reply(401, R"({"error":{"type":"security_exception","reason":"missing authentication"}})"),
       cli::kHistoryEngine},
      {FakeHttp::reply(400, R"({"error":{"type":"parsing_exception","reason":"bad\nquery"}})"), cli::kHistoryEngine},
      {FakeHttp::reply(503, "<html>bad gateway</html>"), cli::kHistoryEngine},
      {FakeHttp::reply(200, "not json"), cli::kHistoryEngine},
      {FakeHttp::reply(200, R"({"hits":{"hits":[{"_source":"a string"}]}})"), cli::kHistoryEngine},
      {FakeHttp::reply(200, R"({"_shards":{"total":2,"failed":1,"failures":[{"reason":{"reason":"boom"}}]},)"
                            R"("hits":{"hits":[]}})"),
       cli::kHistoryEngine},
  };
  for (const auto& [response, code] : cases) {
    FakeHttp http([&response](const http::HttpRequest&) { return response; });
    auto client = http.client();
    const auto r =
        capture([&](std::FILE* f) { return cli::list_jobs(*client, indexer::IndexLayout{}, {}, table(), f); });
    EXPECT_EQ(r.code, code) << response.status << " " << response.body;
    EXPECT_EQ(r.out, "") << "an error prints no partial table";
  }
}

TEST(SearchResponse, ErrorMessagesAreOneLine) {
  const auto h = history::parse_job_hits(FakeHttp::reply(400, R"({"error":{"type":"x","reason":"a\nb\rc"}})"));
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().problem, history::SearchProblem::refused);
  EXPECT_EQ(h.error().message.find_first_of("\r\n"), std::string::npos) << h.error().message;
  EXPECT_NE(h.error().message.find("400"), std::string::npos);
}

const std::string kReturnWeb1 =
    R"({"jid":"20251129194535000001","minion":"web1","status":"failed","retcode":2,"reason":"1 failed state",)"
    R"("failed_state_ids":["will_fail"],"return_text":"{}"})";
const std::string kReturnWeb2 =
    R"({"jid":"20251129194535000001","minion":"web2","status":"succeeded","retcode":0,"return_text":"{\"ok\":1}"})";

FakeHttp show_engine(std::vector<std::string> jobs) {
  return FakeHttp([jobs](const http::HttpRequest& r) {
    if (r.path == "/salt-jobs-*/_search") return FakeHttp::reply(200, search_hits(jobs));
    if (r.path == "/salt-returns-*/_search") return FakeHttp::reply(200, search_hits({kReturnWeb1, kReturnWeb2}));
    return FakeHttp::reply(404, "{}");
  });
}

TEST(JobsShow, AsksForTheJobThenItsReturnsFromTheSameMaster) {
  FakeHttp http = show_engine({kJobFailed});
  auto client = http.client();
  const auto r = capture([&](std::FILE* f) {
    return cli::show_job(*client, indexer::IndexLayout{}, "20251129194535000001", json_lines(), f);
  });
  ASSERT_EQ(r.code, cli::kHistoryOk);
  const auto requests = http.requests();
  ASSERT_EQ(requests.size(), 2u);
  const auto job_query = parse_body(requests[0].body);
  EXPECT_EQ(json_at(job_query, "/query/bool/filter/0/term/jid"), "20251129194535000001");
  const auto returns_query = parse_body(requests[1].body);
  EXPECT_EQ(json_at(returns_query, "/query/bool/filter/0/term/jid"), "20251129194535000001");
  EXPECT_EQ(json_at(returns_query, "/query/bool/filter/1/terms/master/0"), "salt-01");
  EXPECT_EQ(json_at(returns_query, "/sort/0/minion/order"), "asc");

  ASSERT_EQ(r.out.back(), '\n');
  const auto shown = parse_body(r.out);
  EXPECT_EQ(json_at(shown, "/jid"), "20251129194535000001");
  EXPECT_EQ(json_at(shown, "/status"), "failed");
  expect_row(shown, "/returns/0",
             {{"minion", "web1"},
              {"status", "failed"},
              {"reason", "1 failed state"},
              {"failed_states/0/id", "will_fail"},
              {"failed_states/0/comment", "Command failed"}});
  EXPECT_EQ(json_at(shown, "/returns/1/minion"), "web2");
  EXPECT_EQ(json_at(shown, "/returns/1/return_text"), R"({"ok":1})");
  EXPECT_TRUE(rapidjson::Pointer("/returns/1/failed_states").Get(shown)->Empty());
}

TEST(JobsShow, TableNamesEachMinionAndTheFailedStates) {
  FakeHttp http = show_engine({kJobFailed});
  auto client = http.client();
  const auto r = capture([&](std::FILE* f) {
    return cli::show_job(*client, indexer::IndexLayout{}, "20251129194535000001", table(100), f);
  });
  ASSERT_EQ(r.code, cli::kHistoryOk);
  EXPECT_NE(r.out.find("failed states: will_fail"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Command failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("web2"), std::string::npos) << r.out;
}

TEST(JobsShow, SaysHowManyReturnsThePageLeftOut) {
  FakeHttp http([](const http::HttpRequest& r) {
    if (r.path == "/salt-jobs-*/_search") return FakeHttp::reply(200, search_hits({kJobFailed}));
    std::string page = search_hits({kReturnWeb1, kReturnWeb2});
    page.replace(page.find(R"("value":2)"), 9, R"("value":12000)");
    return FakeHttp::reply(200, page);
  });
  auto client = http.client();
  const auto r = capture([&](std::FILE* f) {
    return cli::show_job(*client, indexer::IndexLayout{}, "20251129194535000001", table(100), f);
  });
  ASSERT_EQ(r.code, cli::kHistoryOk);
  EXPECT_NE(r.out.find("(11998 more returns not shown)"), std::string::npos) << r.out;
}

// `text` with the first `from` replaced by `to`.
void swap_once(std::string& text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

// docs/masters.md: one fleet's documents of a jid that disagree on the arguments are two jobs.
TEST(JobsShow, SameJidDifferentJobsPrintsEach) {
  std::string east = kJobFailed, west = kJobFailed;
  swap_once(east, R"("master":"salt-01")", R"("master":"east","fleet":"f1")");
  swap_once(west, R"("master":"salt-01")", R"("master":"west","fleet":"f1")");
  swap_once(west, R"([\"fail\"])", R"([\"other\"])");
  FakeHttp http = show_engine({east, west});
  auto client = http.client();
  const auto r = capture([&](std::FILE* f) {
    return cli::show_job(*client, indexer::IndexLayout{}, "20251129194535000001", table(100), f);
  });
  ASSERT_EQ(r.code, cli::kHistoryOk);
  EXPECT_NE(r.out.find("== job 1 of 2: same jid, different jobs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("== job 2 of 2: same jid, different jobs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seen by   east\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seen by   west\n"), std::string::npos) << r.out;
  EXPECT_EQ(http.requests().size(), 3u) << "one search of the jobs, one of each job's returns";
}

TEST(JobsShow, AJobOfTwoMastersIsOneMergedJob) {
  std::string m1 = kJobFailed, m2 = kJobFailed;
  swap_once(m1, R"("master":"salt-01")", R"("master":"m1","fleet":"f1")");
  swap_once(m2, R"("master":"salt-01")", R"("master":"m2","fleet":"f1")");
  swap_once(m2, R"("kind":"job")", R"("kind":"orphan")");
  swap_once(m2, R"("user":"root")", R"("user":"")");
  FakeHttp http = show_engine({m2, m1});
  auto client = http.client();
  const auto r = capture([&](std::FILE* f) {
    return cli::show_job(*client, indexer::IndexLayout{}, "20251129194535000001", json_lines(), f);
  });
  ASSERT_EQ(r.code, cli::kHistoryOk);
  const auto shown = parse_body(r.out);
  EXPECT_EQ(json_at(shown, "/publisher"), "m1");
  EXPECT_EQ(json_at(shown, "/seen_by/1"), "m2");
  EXPECT_EQ(json_at(shown, "/kind"), "job") << "the publisher's document speaks for the job";
  EXPECT_EQ(json_at(shown, "/user"), "root");
}

TEST(JobsShow, AnUnknownJidIsExitFive) {
  FakeHttp http = show_engine({});
  auto client = http.client();
  const auto r = capture([&](std::FILE* f) { return cli::show_job(*client, indexer::IndexLayout{}, "1", table(), f); });
  EXPECT_EQ(r.code, cli::kHistoryJobUnknown);
  EXPECT_EQ(http.requests().size(), 1u);
}

std::string bucket(const std::string& minion, int jobs, int ok, int failed, int missing, const char* last) {
  return R"({"key":{"minion":")" + minion + R"("},"doc_count":)" + std::to_string(jobs) +
         R"(,"succeeded":{"doc_count":)" + std::to_string(ok) + R"(},"failed":{"doc_count":)" + std::to_string(failed) +
         R"(},"missing":{"doc_count":)" + std::to_string(missing) +
         R"(},"answered":{"doc_count":1,"last":{"value":1,"value_as_string":)" + last + "}}}";
}

std::string minion_page(const std::vector<std::string>& buckets, const std::string& after) {
  std::string out = R"({"_shards":{"total":1,"successful":1,"failed":0},"hits":{"hits":[]},)"
                    R"("aggregations":{"minions":{)";
  if (!after.empty()) out += R"("after_key":{"minion":")" + after + R"("},)";
  out += R"("buckets":[)";
  for (std::size_t i = 0; i < buckets.size(); ++i) out += (i ? "," : "") + buckets[i];
  return out + "]}}}";
}

// Flaky first: the most failed and missing returns, then the most jobs.
TEST(Minions, PagesThroughTheCompositeAggregationAndPutsFlakyMinionsFirst) {
  FakeHttp http([](const http::HttpRequest& r) {
    const auto d = parse_body(r.body);
    const std::string after = json_at(d, "/aggs/minions/composite/after/minion");
    if (after == "<absent>")
      return FakeHttp::reply(200, minion_page({bucket("a", 5, 5, 0, 0, R"("2025-11-29T19:00:00.000Z")"),
                                               bucket("b", 3, 1, 1, 1, R"("2025-11-29T18:00:00.000Z")")},
                                              "b"));
    if (after == "b") return FakeHttp::reply(200, minion_page({bucket("c", 4, 2, 2, 0, "null")}, "c"));
    return FakeHttp::reply(200, minion_page({}, ""));
  });
  auto client = http.client();
  const auto rows = history::fetch_minions(*client, indexer::IndexLayout{}, kNow, {}, 2);
  ASSERT_TRUE(rows);
  // The second page is short, so the last: no third request scans the window again.
  ASSERT_EQ(http.requests().size(), 2u);
  const auto first = parse_body(http.requests()[0].body);
  EXPECT_EQ(http.requests()[0].path, "/salt-returns-*/_search");
  // 19:45:35 asked, 19:45:00 sent: the same request all that minute, which the engine caches.
  EXPECT_EQ(json_at(first, "/query/bool/filter/0/range/job_started_at/gte"),
            std::to_string((kNow - 35'000'000) / 1000));
  EXPECT_EQ(json_at(first, "/aggs/minions/composite/sources/0/minion/terms/field"), "minion");
  EXPECT_EQ(json_at(first, "/aggs/minions/composite/size"), "2");
  // The next page has the same window.
  EXPECT_EQ(json_at(parse_body(http.requests()[1].body), "/query/bool/filter/0/range/job_started_at/gte"),
            std::to_string((kNow - 35'000'000) / 1000));
  std::vector<std::string> order;
  for (const auto& row : rows.value()) order.push_back(row.minion);
  EXPECT_EQ(order, (std::vector<std::string>{"c", "b", "a"}));
}

TEST(Minions, ListsEveryMinionOfAShortPageAsJsonLines) {
  FakeHttp http([](const http::HttpRequest&) {
    return FakeHttp::reply(
        200, minion_page({bucket("a", 5, 5, 0, 0, R"("2025-11-29T19:00:00.000Z")"),
                          bucket("b", 3, 1, 1, 1, R"("2025-11-29T18:00:00.000Z")"), bucket("c", 4, 2, 2, 0, "null")},
                         "c"));
  });
  auto client = http.client();
  const auto r =
      capture([&](std::FILE* f) { return cli::list_minions(*client, indexer::IndexLayout{}, kNow, json_lines(), f); });
  ASSERT_EQ(r.code, cli::kHistoryOk);
  EXPECT_EQ(http.requests().size(), 1u);
  EXPECT_EQ(json_at(parse_body(http.requests()[0].body), "/aggs/minions/composite/size"),
            std::to_string(history::kMinionPageSize));
  EXPECT_EQ(r.out,
            R"({"minion":"c","jobs":4,"succeeded":2,"failed":2,"missing":0,"last_seen":null})"
            "\n"
            R"({"minion":"b","jobs":3,"succeeded":1,"failed":1,"missing":1,"last_seen":"2025-11-29T18:00:00.000Z"})"
            "\n"
            R"({"minion":"a","jobs":5,"succeeded":5,"failed":0,"missing":0,"last_seen":"2025-11-29T19:00:00.000Z"})"
            "\n");
}

TEST(Minions, ABucketWithoutAKeyIsAnError) {
  FakeHttp http([](const http::HttpRequest&) {
    return FakeHttp::reply(200, R"({"aggregations":{"minions":{"buckets":[{"doc_count":1}]}}})");
  });
  auto client = http.client();
  const auto r =
      capture([&](std::FILE* f) { return cli::list_minions(*client, indexer::IndexLayout{}, kNow, table(), f); });
  EXPECT_EQ(r.code, cli::kHistoryEngine);
  EXPECT_EQ(r.out, "");
}

TEST(TextTable, CutsTheWidestShrinkableColumnAtACharacter) {
  Table t{{{"NAME"}, {"TEXT", true}}, {{{"x"}, {"ééééééééééééééééééééééééé"}}}};
  const std::string out = render(t, 20, false);
  EXPECT_EQ(out, "NAME  TEXT\nx     ééééééééééééé…\n");
  EXPECT_EQ(fit("a\nb", 10), "a b");
  EXPECT_EQ(fit("abcdef", 3), "ab…");
}

TEST(TextTable, HidesTheLeastNeededColumnBeforeCuttingTextBelowSixteen) {
  Table t{{{"A"}, {"LONG", true}, {"X", false, false, 1}, {"Y", false, false, 2}},
          {{{"aaaa"}, {"0123456789abcdefghij"}, {"xx"}, {"yy"}}}};
  const std::string out = render(t, 26, false);
  EXPECT_EQ(out, "A     LONG              X\naaaa  0123456789abcde…  xx\n");
  // Narrower still: every droppable column goes, then the text is cut to 8.
  EXPECT_EQ(render(t, 14, false), "A     LONG\naaaa  0123456…\n");
}

}  // namespace
}  // namespace salttap
