// The correlator's verdict on every real capture, against expected files that
// were checked by hand once (tests/golden/jobs/<salt>/<scenario>.jsonl;
// regenerate with tests/golden/update-jobs.sh and review the diff).

#include <gtest/gtest.h>

#include <cstdio>

#include <rapidjson/document.h>

#include "cli/internal/replay_command.h"
#include "correlator/audit.h"
#include "correlator/redactor.h"
#include "tests/support/captures.h"
#include "tests/support/replay_output.h"

namespace salttap {
namespace {

using salttap::testing::capture_raw_files;
using salttap::testing::CaptureTestName;
using salttap::testing::read_file;

std::string replay_jobs(const std::filesystem::path& raw, std::optional<double> missing_after = std::nullopt) {
  cli::ReplayOptions options;
  options.files = {raw.string()};
  options.output = "jobs";
  if (missing_after) options.config.correlator.missing_after = static_cast<Micros>(*missing_after * kMicrosPerSecond);
  return salttap::testing::replay_output(options);
}

std::filesystem::path golden_for(const std::filesystem::path& raw) {
  return std::filesystem::path(SALTTAP_SOURCE_DIR) / "tests/golden/jobs" / raw.parent_path().filename() /
         (raw.stem().string() + ".jsonl");
}

class GoldenJobs : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(GoldenJobs, MatchesTheCheckedSummaries) {
  const auto golden = golden_for(GetParam());
  ASSERT_TRUE(std::filesystem::exists(golden)) << golden;
  EXPECT_EQ(replay_jobs(GetParam()), read_file(golden));
}

INSTANTIATE_TEST_SUITE_P(AllCaptures, GoldenJobs, ::testing::ValuesIn(capture_raw_files()), CaptureTestName());

// The key verdicts (a missing minion, failed states named, test=True as
// would-change...), spelled out so a regenerated golden file cannot quietly
// change them.
std::vector<rapidjson::Document> jobs_of(const std::string& text) {
  std::vector<rapidjson::Document> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    out.emplace_back();
    out.back().Parse(line.c_str());
  }
  return out;
}

std::vector<std::string> list(const rapidjson::Value& job, const char* which) {
  std::vector<std::string> out;
  for (const auto& m : job["minions"][which].GetArray()) out.emplace_back(m.GetString());
  return out;
}

const std::filesystem::path kCaptures = SALTTAP_CAPTURES_DIR;

TEST(CaptureVerdicts, MinionDownIsMissing) {
  for (const char* v : {"salt-3006.25", "salt-3006.26"}) {
    const auto jobs = jobs_of(replay_jobs(kCaptures / v / "minion_down_missing_return.raw"));
    ASSERT_EQ(jobs.size(), 1u) << "the find_job poll is noise, not a job";
    EXPECT_STREQ(jobs[0]["fun"].GetString(), "test.ping");
    EXPECT_STREQ(jobs[0]["status"].GetString(), "missing");
    EXPECT_EQ(list(jobs[0], "missing"), std::vector<std::string>{"minion-b"});
    EXPECT_EQ(list(jobs[0], "succeeded"), std::vector<std::string>{"minion-a"});
  }
}

TEST(CaptureVerdicts, FailedStatesAreNamed) {
  const auto jobs = jobs_of(replay_jobs(kCaptures / "salt-3006.25" / "state_apply_fail.raw"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_STREQ(jobs[0]["status"].GetString(), "failed");
  EXPECT_EQ(list(jobs[0], "failed"), (std::vector<std::string>{"minion-a", "minion-b"}));
  std::set<std::string> ids;
  for (const auto& f : jobs[0]["failed_states"].GetArray()) ids.insert(f["id"].GetString());
  EXPECT_EQ(ids, (std::set<std::string>{"run_false", "missing_source", "needs_false"}));
  EXPECT_EQ(jobs[0]["states"]["failed"].GetUint(), 6u);
}

TEST(CaptureVerdicts, TestTrueWouldChange) {
  const auto jobs = jobs_of(replay_jobs(kCaptures / "salt-3006.25" / "state_apply_test_true.raw"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_STREQ(jobs[0]["status"].GetString(), "succeeded");
  EXPECT_EQ(jobs[0]["states"]["would_change"].GetUint(), 4u);
  EXPECT_EQ(jobs[0]["states"]["changed"].GetUint(), 0u);
  EXPECT_STREQ(jobs[0]["risk"]["level"].GetString(), "none") << "test=True is not risky";
}

TEST(CaptureVerdicts, ScheduledJobsHaveTheirOwnKind) {
  const auto jobs = jobs_of(replay_jobs(kCaptures / "salt-3006.25" / "scheduled_job.raw"));
  std::size_t scheduled = 0;
  for (const auto& j : jobs) {
    if (std::string_view(j["kind"].GetString()) != "scheduled") continue;
    ++scheduled;
    EXPECT_STREQ(j["fun"].GetString(), "cmd.run");
    EXPECT_TRUE(list(j, "missing").empty());
  }
  EXPECT_EQ(scheduled, 2u);
}

TEST(CaptureVerdicts, AFindJobPolledLongJobIsNotMissing) {
  const auto jobs = jobs_of(replay_jobs(kCaptures / "salt-3006.25" / "long_job_find_job.raw"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_STREQ(jobs[0]["status"].GetString(), "succeeded");
  EXPECT_TRUE(list(jobs[0], "missing").empty());
}

TEST(CaptureVerdicts, MissingAfterOverridesDeadlinesAndLateReturnsAreRecorded) {
  // test.sleep 8 with every deadline at 3 s: the find_job answer at +2.2 s
  // extends both minions to +5.2 s, they return at +8 s: late.
  const auto jobs = jobs_of(replay_jobs(kCaptures / "salt-3006.25" / "long_job_find_job.raw", 3.0));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_STREQ(jobs[0]["status"].GetString(), "succeeded");
  EXPECT_EQ(list(jobs[0], "late"), (std::vector<std::string>{"minion-a", "minion-b"}));
}

}  // namespace
}  // namespace salttap

namespace salttap {
namespace {

TEST(Config, TheShippedExampleIsValidAndUnknownKeysAreNamed) {
  const config::Config c = config::load_config(std::string(SALTTAP_SOURCE_DIR) + "/deploy/salttap.yaml");
  EXPECT_EQ(c.master_id, "salt-01");
  ASSERT_EQ(c.correlator.deadlines.size(), 2u);
  EXPECT_EQ(c.correlator.deadline_for("state.apply"), 7200 * kMicrosPerSecond);
  EXPECT_EQ(c.alerts.min_risk, correlator::RiskLevel::high);
  ASSERT_TRUE(c.webhook);
  EXPECT_EQ(c.webhook->retry.max_attempts, 8);

  const auto path = std::filesystem::temp_directory_path() / "salttap-bad-config.yaml";
  std::ofstream(path) << "alerts:\n  webhok: {url: x}\n";
  try {
    config::load_config(path.string());
    FAIL() << "accepted an unknown key";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'webhok'"), std::string::npos) << e.what();
  }
  std::ofstream(path) << "audit:\n  rules:\n    - {name: x, arg_patterns: ['(unclosed']}\n";
  EXPECT_THROW(config::load_config(path.string()), ConfigError);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace salttap
