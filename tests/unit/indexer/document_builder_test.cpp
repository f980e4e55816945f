// DocumentBuilder: the documents of docs/documents.md, from events fed
// through a real Correlator on a manual clock.

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include "correlator/alert.h"
#include "correlator/correlator.h"
#include "indexer/document_builder.h"
#include "tests/support/events.h"

namespace salttap::indexer {
namespace {

using salttap::testing::ev;

struct Doc {
  std::string op;  // index | create
  std::string index, id;
  std::int64_t version = 0;
  rapidjson::Document source;
  DocClass cls;
};

class Builder : public ::testing::Test {
 protected:
  void make(DocumentOptions options = {}) {
    options.master_id = "m1";
    builder_ = std::make_unique<DocumentBuilder>(options, std::make_shared<correlator::Redactor>(), clock_);
    correlator::CorrelatorConfig cc;
    cc.missing_after = 30 * kMicrosPerSecond;
    corr_ = std::make_unique<correlator::Correlator>(
        cc, clock_, [this](correlator::JobUpdate u, const correlator::Job& j) { builder_->on_job(u, j); });
    builder_->set_minions(&corr_->minions());
    corr_->set_observer(builder_.get());
  }
  void feed(const std::string& tag, const std::string& data) {
    auto e = ev(tag, data);
    builder_->on_event(e);
    corr_->on_event(e);
  }
  std::vector<Doc> docs() {
    std::vector<Doc> out;
    for (auto& b : builder_->take_docs()) {
      Doc d;
      d.cls = b.cls;
      const auto nl = b.ndjson.find('\n');
      EXPECT_NE(nl, std::string::npos);
      EXPECT_EQ(b.ndjson.back(), '\n');
      rapidjson::Document action;
      action.Parse(b.ndjson.data(), nl);
      EXPECT_FALSE(action.HasParseError()) << b.ndjson;
      const auto& op = *action.MemberBegin();
      d.op = op.name.GetString();
      d.index = op.value["_index"].GetString();
      d.id = op.value["_id"].GetString();
      if (op.value.HasMember("version")) d.version = op.value["version"].GetInt64();
      const std::string source = b.ndjson.substr(nl + 1, b.ndjson.size() - nl - 2);
      EXPECT_EQ(source.find('\n'), std::string::npos);
      d.source.Parse(source.data(), source.size());
      EXPECT_FALSE(d.source.HasParseError()) << source;
      out.push_back(std::move(d));
    }
    return out;
  }
  static std::vector<const Doc*> of(const std::vector<Doc>& all, DocClass cls) {
    std::vector<const Doc*> out;
    for (const auto& d : all)
      if (d.cls == cls) out.push_back(&d);
    return out;
  }

  // 2026-11-29T23:59:50Z: a job that starts just before midnight.
  ManualClock clock_{1795996790LL * kMicrosPerSecond};
  std::unique_ptr<DocumentBuilder> builder_;
  std::unique_ptr<correlator::Correlator> corr_;
};

const char* kNew = R"({"fun": "test.ping", "arg": [], "tgt": "*", "tgt_type": "glob", "user": "root",
                      "minions": ["a", "b"], "_stamp": "2026-11-29T23:59:50.000000"})";

TEST_F(Builder, JobLifecycleWritesVersionedJobDocsAndReturnsIncludingMissing) {
  make();
  feed("salt/job/20261129235950000000/new", kNew);
  clock_.advance(15 * kMicrosPerSecond);  // past midnight
  feed("salt/job/20261129235950000000/ret/a",
       R"({"id": "a", "fun": "test.ping", "fun_args": [], "return": true, "retcode": 0, "success": true,
           "_stamp": "2026-11-30T00:00:05.000000"})");
  clock_.advance(60 * kMicrosPerSecond);
  corr_->advance();  // b is missing
  const auto all = docs();

  const auto jobs = of(all, DocClass::job);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0]->source["update"].GetString(), std::string("opened"));
  EXPECT_EQ(jobs[1]->source["update"].GetString(), std::string("settled"));
  EXPECT_EQ(jobs[1]->source["status"].GetString(), std::string("missing"));
  for (const Doc* j : jobs) {
    EXPECT_EQ(j->op, "index");
    EXPECT_EQ(j->id, "m1/20261129235950000000");
    EXPECT_EQ(j->index, "salt-jobs-2026.11.29");  // the job's start, not the return's day
  }
  EXPECT_LT(jobs[0]->version, jobs[1]->version);  // a later emission always wins
  EXPECT_EQ(jobs[1]->source["duration_ms"].GetDouble(), 75000.0);

  const auto rets = of(all, DocClass::ret);
  ASSERT_EQ(rets.size(), 2u);
  EXPECT_EQ(rets[0]->id, "m1/20261129235950000000/a");
  EXPECT_EQ(rets[0]->index, "salt-returns-2026.11.29");
  EXPECT_EQ(rets[0]->version, 2);
  EXPECT_EQ(rets[0]->source["status"].GetString(), std::string("succeeded"));
  EXPECT_EQ(rets[0]->source["@timestamp"].GetString(), std::string("2026-11-30T00:00:05.000000Z"));
  EXPECT_TRUE(rets[0]->source["return"].GetBool());
  EXPECT_EQ(rets[1]->id, "m1/20261129235950000000/b");
  EXPECT_EQ(rets[1]->version, 1);  // a real return (2) always beats "missing"
  EXPECT_EQ(rets[1]->source["status"].GetString(), std::string("missing"));
  EXPECT_EQ(rets[1]->source["fun"].GetString(), std::string("test.ping"));

  // A late return for b: version 2 over the missing document, and an updated job doc.
  feed("salt/job/20261129235950000000/ret/b",
       R"({"id": "b", "fun": "test.ping", "fun_args": [], "return": true, "retcode": 0, "success": true})");
  const auto late = docs();
  const auto late_rets = of(late, DocClass::ret);
  ASSERT_EQ(late_rets.size(), 1u);
  EXPECT_EQ(late_rets[0]->id, "m1/20261129235950000000/b");
  EXPECT_EQ(late_rets[0]->version, 2);
  EXPECT_TRUE(late_rets[0]->source["late"].GetBool());
  ASSERT_EQ(of(late, DocClass::job).size(), 1u);
  EXPECT_EQ(of(late, DocClass::job)[0]->source["update"].GetString(), std::string("updated"));
  EXPECT_GT(of(late, DocClass::job)[0]->version, jobs[1]->version);
}

TEST_F(Builder, SameEventsGiveTheSameDocumentsByteForByte) {
  std::string first;
  for (int run = 0; run < 2; ++run) {
    clock_.set(1795996790LL * kMicrosPerSecond);
    make();
    feed("salt/job/20261129235950000000/new", kNew);
    feed("salt/job/20261129235950000000/ret/a", R"({"id": "a", "fun": "test.ping", "return": true, "retcode": 0})");
    feed("salt/auth", R"({"id": "a", "act": "accept", "_stamp": "2026-11-29T23:59:51.000000"})");
    std::string all;
    for (auto& d : builder_->take_docs()) all += d.ndjson;
    if (run == 0)
      first = all;
    else
      EXPECT_EQ(all, first);
  }
  EXPECT_FALSE(first.empty());
}

TEST_F(Builder, FunctionBlacklistSkipsJobsReturnsAndCountsThem) {
  DocumentOptions o;
  o.functions_blacklist = {"test.*"};
  make(o);
  feed("salt/job/1/new", kNew);
  feed("salt/job/1/ret/a", R"({"id": "a", "fun": "test.ping", "return": true, "retcode": 0})");
  EXPECT_TRUE(of(docs(), DocClass::job).empty());
  EXPECT_GE(builder_->stats().skipped_by_function, 2u);

  // A multi-function job is kept when any function is not blacklisted.
  feed("salt/job/2/new", R"({"fun": ["test.ping", "cmd.run"], "arg": [[], ["id"]], "tgt": "a", "minions": ["a"]})");
  EXPECT_EQ(of(docs(), DocClass::job).size(), 1u);
}

TEST_F(Builder, WhitelistKeepsOnlyMatchingFunctions) {
  DocumentOptions o;
  o.functions_whitelist = {"state.*"};
  make(o);
  feed("salt/job/1/new", kNew);
  EXPECT_TRUE(of(docs(), DocClass::job).empty());
  feed("salt/job/2/new", R"({"fun": "state.apply", "arg": [], "tgt": "a", "minions": ["a"]})");
  EXPECT_EQ(of(docs(), DocClass::job).size(), 1u);
}

TEST_F(Builder, ReturnsAreRedactedBeforeTheyAreWritten) {
  make();
  feed("salt/job/1/new", R"({"fun": "pillar.items", "arg": [], "tgt": "a", "minions": ["a"]})");
  feed("salt/job/1/ret/a", R"({"id": "a", "fun": "pillar.items", "return": {"db_password": "hunter2"}, "retcode": 0})");
  feed("salt/job/2/new", R"({"fun": "cmd.run", "arg": ["x"], "tgt": "a", "minions": ["a"]})");
  feed("salt/job/2/ret/a", R"({"id": "a", "fun": "cmd.run", "return": {"api_token": "abc", "ok": 1}, "retcode": 0})");
  std::string all;
  for (auto& d : builder_->take_docs()) all += d.ndjson;
  EXPECT_EQ(all.find("hunter2"), std::string::npos);
  EXPECT_EQ(all.find("\"abc\""), std::string::npos);
  EXPECT_NE(all.find(std::string(correlator::kRedactedMarker)), std::string::npos);
  EXPECT_GE(builder_->stats().redactions, 2u);
}

TEST_F(Builder, RawEventsFollowTheTagFiltersAndAreRedacted) {
  DocumentOptions o;
  o.events_exclude = {"salt/job/*"};
  make(o);
  feed("salt/job/1/new", kNew);
  feed("myco/deploy", R"({"password": "s3cret", "app": "web", "_stamp": "2026-11-28T10:00:00.000000"})");
  const auto all = docs();
  const auto events = of(all, DocClass::event);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]->op, "create");
  EXPECT_EQ(events[0]->index, "salt-events-2026.11.28");  // its own _stamp
  EXPECT_EQ(events[0]->source["tag"].GetString(), std::string("myco/deploy"));
  EXPECT_EQ(events[0]->source["data"]["password"].GetString(), std::string(correlator::kRedactedMarker));
  EXPECT_EQ(builder_->stats().events_filtered, 1u);
}

TEST_F(Builder, ReturnTextIsBoundedOnACharacterBoundaryAndFlatOnlyWhenSafe) {
  DocumentOptions o;
  o.text_cap = 256;
  make(o);
  feed("salt/job/1/new", R"({"fun": "cmd.run", "arg": [], "tgt": "a", "minions": ["a", "b", "c"]})");
  std::string big = "\"";
  for (int i = 0; i < 200; ++i) big += "é";  // 2 bytes each
  big += "\"";
  feed("salt/job/1/ret/a", R"({"id": "a", "fun": "cmd.run", "retcode": 0, "return": )" + big + "}");
  std::string deep = "1";
  for (int i = 0; i < 25; ++i) deep = R"({"k": )" + deep + "}";
  feed("salt/job/1/ret/b", R"({"id": "b", "fun": "cmd.run", "retcode": 0, "return": )" + deep + "}");
  feed("salt/job/1/ret/c", R"({"id": "c", "fun": "cmd.run", "retcode": 0, "return": {"x": [1, "two"]}})");
  const auto all = docs();
  const auto rets = of(all, DocClass::ret);
  ASSERT_EQ(rets.size(), 3u);
  const auto& a = rets[0]->source;
  EXPECT_TRUE(a["return_truncated"].GetBool());
  EXPECT_LE(a["return_text"].GetStringLength(), 256u);
  EXPECT_FALSE(a.HasMember("return_flat"));                // not an object
  EXPECT_FALSE(rets[1]->source.HasMember("return_flat"));  // deeper than flattened's depth_limit (20)
  EXPECT_TRUE(rets[2]->source.HasMember("return_flat"));
  EXPECT_EQ(rets[2]->source["return_flat"]["x"][1].GetString(), std::string("two"));
  EXPECT_EQ(builder_->stats().returns_truncated, 1u);
}

TEST_F(Builder, StateRunsGiveOneDocumentPerStateWhenEnabled) {
  DocumentOptions o;
  o.states = true;
  make(o);
  feed("salt/job/1/new", R"({"fun": "state.apply", "arg": [], "tgt": "a", "minions": ["a"]})");
  feed("salt/job/1/ret/a", R"({"id": "a", "fun": "state.apply", "retcode": 2, "return": {
      "file_|-motd_|-/etc/motd_|-managed": {"__id__": "motd", "name": "/etc/motd", "result": true,
          "changes": {"diff": "+hi"}, "comment": "ok", "__run_num__": 0, "duration": 1.5, "start_time": "10:00:00.1",
          "__sls__": "base"},
      "cmd_|-fail_|-false_|-run": {"__id__": "fail", "name": "false", "result": false, "changes": {},
          "comment": "Command failed", "__run_num__": 1, "duration": 2}}})");
  const auto all = docs();
  const auto states = of(all, DocClass::state);
  ASSERT_EQ(states.size(), 2u);
  EXPECT_NE(states[0]->id, states[1]->id);
  EXPECT_EQ(states[0]->op, "create");
  EXPECT_EQ(states[0]->source["function"].GetString(), std::string("file.managed"));
  EXPECT_EQ(states[0]->source["outcome"].GetString(), std::string("succeeded"));
  EXPECT_TRUE(states[0]->source["changed"].GetBool());
  EXPECT_EQ(states[1]->source["function"].GetString(), std::string("cmd.run"));
  EXPECT_EQ(states[1]->source["outcome"].GetString(), std::string("failed"));
  EXPECT_FALSE(states[1]->source["changed"].GetBool());
  const auto rets = of(all, DocClass::ret);
  ASSERT_EQ(rets.size(), 1u);
  EXPECT_EQ(rets[0]->source["states"]["failed"].GetInt(), 1);
  EXPECT_EQ(rets[0]->source["failed_state_ids"][0].GetString(), std::string("fail"));
}

// `test` and `highstate` come from the minion's fun_args (a scheduled
// return has no `new`); the state counts tell changed from would-change.
TEST_F(Builder, ReturnsSayWhetherTheyAreHighstatesAndDryRuns) {
  make();
  const std::string states = R"("return": {"file_|-motd_|-/etc/motd_|-managed": {"__id__": "motd", "result": null,
      "changes": {"diff": "+hi"}, "__run_num__": 0}}, "retcode": 0)";
  feed("salt/job/1/ret/a",
       R"({"id": "a", "fun": "state.apply", "fun_args": [{"__kwarg__": true, "test": true}], )" + states + "}");
  feed("salt/job/2/ret/a", R"({"id": "a", "fun": "state.highstate", "fun_args": [], )" + states + "}");
  feed("salt/job/3/ret/a", R"({"id": "a", "fun": "state.apply", "fun_args": ["core", "test=True"], )" + states + "}");
  feed("salt/job/4/ret/a", R"({"id": "a", "fun": "test.ping", "fun_args": [], "return": true})");
  const auto all = docs();
  const auto rets = of(all, DocClass::ret);
  ASSERT_EQ(rets.size(), 4u);
  const std::pair<bool, bool> expected[] = {{true, true}, {false, true}, {true, false}, {false, false}};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(rets[i]->source["test"].GetBool(), expected[i].first) << i;
    EXPECT_EQ(rets[i]->source["highstate"].GetBool(), expected[i].second) << i;
  }
  EXPECT_EQ(rets[0]->source["states"]["would_change"].GetInt(), 1);
  EXPECT_EQ(rets[0]->source["states"]["failed"].GetInt(), 0);
}

TEST_F(Builder, AMinionEntityIsOneUndatedDocumentWithAnExternalVersion) {
  make();
  builder_->on_minion_entity("web1", 1'800'000'000'000'123, 1'800'000'000'000'000,
                             R"({"master":"m1","minion":"web1","silent":false})");
  const auto all = docs();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].cls, DocClass::entity);
  EXPECT_EQ(all[0].op, "index");
  EXPECT_EQ(all[0].index, "salt-minions");
  EXPECT_EQ(all[0].id, "m1/web1");
  EXPECT_EQ(all[0].version, 1'800'000'000'000'123);
  EXPECT_STREQ(all[0].source["salttap"]["doc"].GetString(), "minions");
  EXPECT_STREQ(all[0].source["@timestamp"].GetString(), format_utc(1'800'000'000'000'000).c_str());
  EXPECT_STREQ(all[0].source["minion"].GetString(), "web1");
  EXPECT_FALSE(all[0].source["silent"].GetBool());
}

TEST_F(Builder, UndatedIndicesAndLongIdsAreHashed) {
  DocumentOptions o;
  o.layout.index_date = false;
  o.layout.prefix = "fleet";
  make(o);
  const std::string minion(300, 'm');
  feed("salt/job/1/new", R"({"fun": "test.ping", "arg": [], "tgt": "*", "minions": [")" + minion + R"("]})");
  feed("salt/job/1/ret/" + minion, R"({"id": ")" + minion + R"(", "fun": "test.ping", "return": true, "retcode": 0})");
  const auto all = docs();
  const auto rets = of(all, DocClass::ret);
  ASSERT_EQ(rets.size(), 1u);
  EXPECT_EQ(rets[0]->index, "fleet-returns");
  EXPECT_EQ(rets[0]->id.rfind("m1/1/~", 0), 0u) << rets[0]->id;
  EXPECT_LT(rets[0]->id.size(), 64u);
  EXPECT_EQ(rets[0]->source["minion"].GetString(), minion);  // the field keeps the full name
}

TEST_F(Builder, ASpoolFullAlertIsOneDocumentPerEpisode) {
  make();
  clock_.advance(60 * kMicrosPerSecond);
  (void)docs();
  // What alerting/spool_full_alert.h makes: no jid, the episode's start as its time.
  const correlator::Alert alert{correlator::AlertKind::spool_full,
                                {correlator::AlertKind::spool_full},
                                "",
                                R"({"alert":"spool_full","kinds":["spool_full"],"master":"m1","spool_bytes":10})",
                                clock_.now(),
                                clock_.now()};
  builder_->on_alert(alert);
  const auto all = docs();
  const auto alerts = of(all, DocClass::alert);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0]->op, "create");
  EXPECT_EQ(alerts[0]->id, "m1/spool_full/" + std::to_string(clock_.now()));
  EXPECT_EQ(alerts[0]->index, "salt-alerts-2026.11.30");
  EXPECT_STREQ(alerts[0]->source["alert"].GetString(), "spool_full");
}

}  // namespace
}  // namespace salttap::indexer
