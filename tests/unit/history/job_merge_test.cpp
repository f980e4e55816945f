// The merged view of one job across the masters of a fleet
// (history/job_merge.h): the union of the expected minions less syndic
// stand-ins, the best outcome per minion, seen_by and the publisher, counts
// recomputed, and the collision guard that keeps different jobs with one
// jid apart.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "history/job_merge.h"
#include "tests/support/search_json.h"

namespace salttap {
namespace {

using history::JobRow;
using history::merge_job_documents;
using history::merge_job_rows;
using history::MergedJob;
using testing::json_at;
using testing::parse_body;

constexpr const char* kJid = "20261206041500123456";

JobRow doc(std::string master, std::string kind, std::string user, std::vector<std::string> expected,
           std::vector<std::string> succeeded, std::vector<std::string> failed = {},
           std::vector<std::string> missing = {}) {
  JobRow j;
  j.jid = kJid;
  j.master = std::move(master);
  j.fleet = "f1";
  j.kind = std::move(kind);
  j.user = std::move(user);
  j.fun = "test.ping";
  j.args_text = "[]";
  j.started_at = "2026-12-06T04:15:00.123456Z";
  j.expected_list = std::move(expected);
  j.succeeded_list = std::move(succeeded);
  j.failed_list = std::move(failed);
  j.missing_list = std::move(missing);
  j.expected = static_cast<std::int64_t>(j.expected_list.size());
  j.succeeded = static_cast<std::int64_t>(j.succeeded_list.size());
  j.failed = static_cast<std::int64_t>(j.failed_list.size());
  j.missing = static_cast<std::int64_t>(j.missing_list.size());
  j.returned = j.succeeded + j.failed;
  j.status = j.failed ? "failed" : j.missing ? "missing" : "succeeded";
  j.source = R"({"jid":")" + j.jid + R"(","master":")" + j.master + R"(","status":")" + j.status + R"("})";
  return j;
}

// The outcome the merge gave `minion`.
std::string outcome(const MergedJob& m, const std::string& minion) {
  for (const auto& x : m.minions)
    if (x.minion == minion) return x.status + (x.late ? " late" : "");
  return "<absent>";
}

TEST(JobMerge, AnOrphanReturnOnTheOtherMasterIsTheSameJob) {
  JobRow orphan = doc("m2", "orphan", "", {}, {"minion-a"});
  orphan.started_at = "2026-12-06T04:15:00.400000Z";  // its first return, later than the `new`
  const auto jobs = merge_job_documents({orphan, doc("m1", "job", "root", {"minion-a"}, {"minion-a"})});
  ASSERT_EQ(jobs.size(), 1u);
  const MergedJob& m = jobs[0];
  EXPECT_EQ(m.seen_by, (std::vector<std::string>{"m1", "m2"}));
  EXPECT_EQ(m.publisher, "m1");
  EXPECT_EQ(m.job.user, "root") << "the publisher's document speaks for the job";
  EXPECT_EQ(m.job.kind, "job");
  EXPECT_EQ(m.job.status, "succeeded");
  EXPECT_EQ(m.job.expected, 1);
  EXPECT_EQ(m.job.succeeded, 1);
  EXPECT_EQ(m.job.returned, 1);
  ASSERT_EQ(m.minions.size(), 1u);
  EXPECT_EQ(m.minions[0].seen_by, (std::vector<std::string>{"m1", "m2"}));
}

TEST(JobMerge, EachMinionGetsTheBestOutcomeAnyMasterSaw) {
  // m1 published to a, b, c, d: a succeeded, b and c missing there, d failed.
  // m2 heard b's return (the minion's connection to m1 was down) and c's late.
  JobRow m1 = doc("m1", "job", "root", {"a", "b", "c", "d"}, {"a"}, {"d"}, {"b", "c"});
  JobRow m2 = doc("m2", "orphan", "", {}, {"b", "c", "d"});
  m2.late_list = {"c"};
  const auto jobs = merge_job_documents({m1, m2});
  ASSERT_EQ(jobs.size(), 1u);
  const MergedJob& m = jobs[0];
  EXPECT_EQ(outcome(m, "a"), "succeeded");
  EXPECT_EQ(outcome(m, "b"), "succeeded");
  EXPECT_EQ(outcome(m, "c"), "succeeded late") << "late beats missing";
  EXPECT_EQ(outcome(m, "d"), "succeeded") << "succeeded beats failed";
  EXPECT_EQ(m.job.status, "succeeded");
  EXPECT_EQ(m.job.expected, 4);
  EXPECT_EQ(m.job.succeeded, 4);
  EXPECT_EQ(m.job.missing, 0);
  EXPECT_EQ(m.job.late, 1);
}

TEST(JobMerge, FailedBeatsLateAndLateBeatsMissing) {
  JobRow m1 = doc("m1", "job", "root", {"a", "b"}, {}, {"a"}, {"b"});
  JobRow m2 = doc("m2", "orphan", "", {}, {"a"});
  m2.late_list = {"a"};
  const auto jobs = merge_job_documents({m1, m2});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(outcome(jobs[0], "a"), "failed");
  EXPECT_EQ(outcome(jobs[0], "b"), "missing");
  EXPECT_EQ(jobs[0].job.status, "failed") << "failed wins over missing, as on one master";
  EXPECT_EQ(jobs[0].job.failed, 1);
  EXPECT_EQ(jobs[0].job.missing, 1);
}

TEST(JobMerge, ASyndicThatStoodInForItsMinionsIsNoMinionOfTheJob) {
  // Top's salttap heard the syndic's list only after the job's first document:
  // an older document of top still expects the syndic; the settled one names it.
  JobRow top = doc("top", "job", "root", {"lower-syndic", "minion-s"}, {"minion-s"}, {}, {"lower-syndic"});
  top.syndics = {"lower-syndic"};
  JobRow lower = doc("lower", "job", "root", {"minion-s"}, {"minion-s"});
  lower.started_at = "2026-12-06T04:15:00.200000Z";  // the syndic's republish comes after top's `new`
  const auto jobs = merge_job_documents({lower, top});
  ASSERT_EQ(jobs.size(), 1u);
  const MergedJob& m = jobs[0];
  EXPECT_EQ(m.publisher, "top") << "the earliest `new`";
  EXPECT_EQ(outcome(m, "lower-syndic"), "<absent>");
  EXPECT_EQ(m.job.expected, 1);
  EXPECT_EQ(m.job.missing, 0);
  EXPECT_EQ(m.job.status, "succeeded");
  EXPECT_EQ(m.seen_by, (std::vector<std::string>{"lower", "top"}));
}

TEST(JobMerge, SameJidDifferentArgumentsAreTwoJobs) {
  JobRow east = doc("east", "job", "root", {"minion-a"}, {"minion-a"});
  east.fun = "test.echo";
  east.args_text = R"(["east"])";
  JobRow west = east;
  west.master = "west";
  west.args_text = R"(["west"])";
  const auto jobs = merge_job_documents({east, west});
  ASSERT_EQ(jobs.size(), 2u);
  for (const auto& m : jobs) {
    EXPECT_EQ(m.seen_by.size(), 1u);
    EXPECT_EQ(m.publisher, m.seen_by[0]);
  }
}

TEST(JobMerge, SameJidDifferentFunctionsAreTwoJobs) {
  JobRow a = doc("m1", "job", "root", {"minion-a"}, {"minion-a"});
  JobRow b = doc("m2", "job", "root", {"minion-a"}, {"minion-a"});
  b.fun = "test.version";
  EXPECT_EQ(merge_job_documents({a, b}).size(), 2u);
}

TEST(JobMerge, AnOrphanWithoutArgumentsJoinsTheOnlyJobOfItsFunction) {
  JobRow a = doc("m1", "job", "root", {"minion-a"}, {"minion-a"});
  JobRow orphan = doc("m2", "orphan", "", {}, {"minion-a"});
  orphan.args_text.clear();
  EXPECT_EQ(merge_job_documents({a, orphan}).size(), 1u);
  // Two jobs of that function with different arguments: which one it belongs to is unknown.
  JobRow c = doc("m3", "job", "root", {"minion-a"}, {"minion-a"});
  c.args_text = R"(["other"])";
  EXPECT_EQ(merge_job_documents({a, c, orphan}).size(), 3u);
}

TEST(JobMerge, DifferentFleetsNeverMerge) {
  JobRow a = doc("m1", "job", "root", {"minion-a"}, {"minion-a"});
  JobRow b = doc("m2", "orphan", "", {}, {"minion-a"});
  b.fleet = "f2";
  const auto jobs = merge_job_documents({a, b});
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_NE(jobs[0].fleet, jobs[1].fleet);
}

TEST(JobMerge, OneDocumentIsShownAsItStands) {
  JobRow a = doc("m1", "job", "root", {"a", "b"}, {"a"});
  a.status = "running";
  a.pending = 1;
  const auto jobs = merge_job_documents({a});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job.status, "running");
  EXPECT_EQ(jobs[0].job.expected, 2);
  EXPECT_EQ(outcome(jobs[0], "b"), "pending");
  EXPECT_EQ(jobs[0].publisher, "m1");
}

TEST(JobMerge, ARunningJobStaysRunningWhileAMinionIsPendingEverywhere) {
  JobRow a = doc("m1", "job", "root", {"a", "b"}, {"a"});
  a.status = "running";
  JobRow b = doc("m2", "orphan", "", {}, {"a"});
  const auto jobs = merge_job_documents({a, b});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job.status, "running");
  EXPECT_EQ(jobs[0].job.pending, 1);
}

TEST(JobMerge, CappedListsKeepTheLargestCounts) {
  JobRow a = doc("m1", "job", "root", {"a"}, {"a"});
  a.truncated = true;
  a.expected = 5000;
  a.succeeded = 4000;
  a.missing = 1000;
  JobRow b = doc("m2", "orphan", "", {}, {"a"});
  b.succeeded = 4500;
  const auto jobs = merge_job_documents({a, b});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_TRUE(jobs[0].lists_capped);
  EXPECT_EQ(jobs[0].job.expected, 5000);
  EXPECT_EQ(jobs[0].job.succeeded, 4500);
}

TEST(JobMerge, RowsOfAJobsSearchMergePerJid) {
  JobRow a1 = doc("m1", "job", "root", {"a"}, {"a"});
  JobRow a2 = doc("m2", "orphan", "", {}, {"a"});
  JobRow b = doc("m1", "job", "root", {"a"}, {"a"});
  b.jid = "20261206041400000001";
  const auto rows = merge_job_rows({a1, a2, b});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].job.jid, kJid);
  EXPECT_EQ(rows[0].seen_by.size(), 2u);
  EXPECT_EQ(rows[1].job.jid, "20261206041400000001");
}

TEST(JobMerge, TheMergedSourceSaysWhoSawTheJob) {
  const auto jobs =
      merge_job_documents({doc("m1", "job", "root", {"a", "b"}, {"a"}, {}, {"b"}), doc("m2", "orphan", "", {}, {"b"})});
  ASSERT_EQ(jobs.size(), 1u);
  const auto d = parse_body(history::merged_source(jobs[0]));
  EXPECT_EQ(json_at(d, "/status"), "succeeded");
  EXPECT_EQ(json_at(d, "/counts/succeeded"), "2");
  EXPECT_EQ(json_at(d, "/counts/missing"), "0");
  EXPECT_EQ(json_at(d, "/seen_by/0"), "m1");
  EXPECT_EQ(json_at(d, "/seen_by/1"), "m2");
  EXPECT_EQ(json_at(d, "/publisher"), "m1");
  EXPECT_EQ(json_at(d, "/fleet"), "f1");
  EXPECT_EQ(json_at(d, "/minions/succeeded/1"), "b");
}

}  // namespace
}  // namespace salttap
