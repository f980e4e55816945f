// Auditor: every default rule firing and not firing, custom rules, YAML.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "correlator/audit.h"
#include "tap/event.h"
#include "tap/event_from_json.h"
#include "tests/support/captures.h"
#include "tests/support/config_errors.h"
#include "tests/support/events.h"

namespace salttap::correlator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using salttap::testing::from_json;

// One job as the auditor sees it, built from JSON.
struct Job {
  std::string fun;
  std::string arg_json = "[]";
  std::string tgt_json = "\"*\"";
  std::string tgt_type = "glob";
  std::size_t minions = 2;
  std::string user = "root";
};

Risk assess(const Auditor& a, const Job& j) {
  const auto arg = from_json(j.arg_json);
  const auto tgt = from_json(j.tgt_json);
  return a.assess({j.fun, &arg.get(), &tgt.get(), j.tgt_type, j.minions, j.user});
}

const Auditor& defaults() {
  static const Auditor a(Auditor::default_rules());
  return a;
}

RiskLevel level(const Job& j) { return assess(defaults(), j).level; }

std::vector<std::string> reasons(const Job& j) { return assess(defaults(), j).reasons; }

// --- default rules -----------------------------------------------------------

TEST(AuditDefaults, CmdRunOnAllMinionsIsHigh) {
  EXPECT_THAT(reasons({.fun = "cmd.run", .arg_json = R"(["echo hi"])"}),
              ElementsAre("shell-on-all-minions: shell command on every minion"));
  EXPECT_EQ(level({.fun = "cmd.run", .arg_json = R"(["echo hi"])"}), RiskLevel::high);
  for (const char* fun : {"cmd.script", "cmd.shell", "cmd.run_all", "cmd.retcode", "cmd.powershell"})
    EXPECT_EQ(level({.fun = fun, .arg_json = R"(["x"])"}), RiskLevel::high) << fun;
}

TEST(AuditDefaults, CmdRunOnSomeMinionsIsNone) {
  const Risk r =
      assess(defaults(), {.fun = "cmd.run", .arg_json = R"(["echo hi"])", .tgt_json = "\"minion-a\"", .minions = 1});
  EXPECT_EQ(r.level, RiskLevel::none);
  EXPECT_TRUE(r.reasons.empty());
  EXPECT_EQ(level({.fun = "cmd.run", .tgt_json = "\"web*\""}), RiskLevel::none);
  EXPECT_EQ(level({.fun = "cmd.run", .tgt_json = R"(["*"])", .tgt_type = "list"}), RiskLevel::none);
  EXPECT_EQ(level({.fun = "cmd.run", .tgt_json = "\"*\"", .tgt_type = "grain"}), RiskLevel::none);
  EXPECT_EQ(level({.fun = "cmd.run", .tgt_json = "null"}), RiskLevel::none);
  EXPECT_EQ(level({.fun = "test.ping"}), RiskLevel::none);  // fleet-wide but harmless
}

TEST(AuditDefaults, WholeFleetSpellings) {
  EXPECT_EQ(level({.fun = "cmd.run", .tgt_json = "\"*\"", .tgt_type = "compound"}), RiskLevel::high);
  EXPECT_EQ(level({.fun = "cmd.run", .tgt_json = "\".*\"", .tgt_type = "pcre"}), RiskLevel::high);
  EXPECT_EQ(level({.fun = "cmd.run", .tgt_json = "\"*\"", .tgt_type = ""}), RiskLevel::high);
  EXPECT_EQ(level({.fun = "cmd.run", .tgt_json = R"({"__bytes_b64__": "Kg=="})"}), RiskLevel::high);  // bin "*"
}

TEST(AuditDefaults, StateApplyOnAllWithoutTestIsMedium) {
  for (const char* fun : {"state.apply", "state.highstate", "state.sls", "state.sls_id", "state.single"}) {
    EXPECT_THAT(reasons({.fun = fun, .arg_json = R"(["webserver"])"}),
                ElementsAre("state-on-all-minions: state run on every minion without test=True"))
        << fun;
  }
  EXPECT_EQ(level({.fun = "state.apply", .tgt_json = "\"minion-a\""}), RiskLevel::none);
  EXPECT_EQ(level({.fun = "state.show_sls", .arg_json = R"(["webserver"])"}), RiskLevel::none);
}

TEST(AuditDefaults, StateApplyWithTestTrueIsNone) {
  EXPECT_EQ(level({.fun = "state.apply", .arg_json = R"(["change", {"__kwarg__": true, "test": true}])"}),
            RiskLevel::none);
  EXPECT_EQ(level({.fun = "state.apply", .arg_json = R"(["change", "test=True"])"}), RiskLevel::none);
  EXPECT_EQ(level({.fun = "state.apply", .arg_json = R"(["test=yes"])"}), RiskLevel::none);
  EXPECT_EQ(level({.fun = "state.apply", .arg_json = R"([{"__kwarg__": true, "test": "True"}])"}), RiskLevel::none);
  // test=False, or a "test" key in a positional (non-kwarg) dict, is a real run.
  EXPECT_EQ(level({.fun = "state.apply", .arg_json = R"([{"__kwarg__": true, "test": false}])"}), RiskLevel::medium);
  EXPECT_EQ(level({.fun = "state.apply", .arg_json = R"(["test=False"])"}), RiskLevel::medium);
  EXPECT_EQ(level({.fun = "state.apply", .arg_json = R"([{"test": true}])"}), RiskLevel::medium);
  EXPECT_EQ(level({.fun = "state.apply", .arg_json = R"(["mytest=True"])"}), RiskLevel::medium);
}

TEST(AuditDefaults, DestructiveShellCommandIsCriticalOnAnyTarget) {
  const Job one{.fun = "cmd.run", .arg_json = R"(["rm -rf /"])", .tgt_json = "\"minion-a\"", .minions = 1};
  EXPECT_THAT(reasons(one), ElementsAre("destructive-shell-command: argument runs rm -rf, mkfs or dd"));
  for (const char* cmd :
       {"rm -rf /", "rm -fr /var", "rm -r -f /x", "rm -f -r /x", "rm -Rf /", "rm -rvf /x",
        "sudo /bin/rm -rf --no-preserve-root /", "rm --recursive --force /srv", "cd /tmp && rm -rf *",
        "bash -c 'rm -rf /opt'", "RM -RF /", "mkfs.ext4 /dev/sdb1", "mkfs -t xfs /dev/sdc", "/sbin/mke2fs /dev/sdd",
        "dd if=/dev/zero of=/dev/sda", "dd bs=1M if=/dev/urandom of=/dev/sdb"}) {
    Job j{.fun = "cmd.run", .arg_json = "[\"" + std::string(cmd) + "\"]", .tgt_json = "\"minion-a\"", .minions = 1};
    EXPECT_EQ(level(j), RiskLevel::critical) << cmd;
  }
  for (const char* cmd : {"rm -f /tmp/x", "rm -r /tmp/dir", "rmdir -rf x", "perform -rf", "farm -rf x", "rm /tmp/-rf",
                          "echo mkfsx", "add if=x", "ls -rf", "dd of=/dev/null"}) {
    Job j{.fun = "cmd.run", .arg_json = "[\"" + std::string(cmd) + "\"]", .tgt_json = "\"minion-a\"", .minions = 1};
    EXPECT_EQ(level(j), RiskLevel::none) << cmd;
  }
  // Any function: the pattern is on the arguments.
  EXPECT_EQ(level({.fun = "cmd.script",
                   .arg_json = R"(["salt://x.sh", "mkfs.xfs /dev/sdb"])",
                   .tgt_json = "\"a\"",
                   .minions = 1}),
            RiskLevel::critical);
}

TEST(AuditDefaults, KwargsInTheArgListAreAudited) {
  const Job j{.fun = "cmd.run",
              .arg_json = R"([{"__kwarg__": true, "cmd": "rm -rf /tmp/x", "cwd": "/"}])",
              .tgt_json = "\"minion-a\"",
              .minions = 1};
  EXPECT_EQ(level(j), RiskLevel::critical);
  // Fleet-wide as well: two reasons, the critical one first.
  EXPECT_THAT(reasons({.fun = "cmd.run", .arg_json = j.arg_json}),
              ElementsAre("destructive-shell-command: argument runs rm -rf, mkfs or dd",
                          "shell-on-all-minions: shell command on every minion"));
  // A nested value is rendered too.
  EXPECT_EQ(
      level({.fun = "test.arg", .arg_json = R"([{"__kwarg__": true, "x": {"a": ["rm -rf /"]}}])", .tgt_json = "\"a\""}),
      RiskLevel::critical);
}

TEST(AuditDefaults, DestructiveFunctionsAreHighOnAnyTarget) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"file.remove", "destroy-data: removes files, file systems or volumes"},
      {"file.rmdir", "destroy-data: removes files, file systems or volumes"},
      {"disk.wipe", "destroy-data: removes files, file systems or volumes"},
      {"lvm.lvremove", "destroy-data: removes files, file systems or volumes"},
      {"system.reboot", "power-off-or-reboot: reboots or powers off minions"},
      {"system.shutdown", "power-off-or-reboot: reboots or powers off minions"},
      {"system.halt", "power-off-or-reboot: reboots or powers off minions"},
      {"system.poweroff", "power-off-or-reboot: reboots or powers off minions"},
      {"pkg.remove", "remove-packages-or-accounts: removes packages, users or groups"},
      {"pkg.purge", "remove-packages-or-accounts: removes packages, users or groups"},
      {"user.delete", "remove-packages-or-accounts: removes packages, users or groups"},
      {"group.delete", "remove-packages-or-accounts: removes packages, users or groups"},
  };
  for (const auto& [fun, reason] : cases) {
    const Job j{.fun = fun, .arg_json = R"(["x"])", .tgt_json = "\"minion-a\"", .minions = 1};
    EXPECT_EQ(level(j), RiskLevel::high) << fun;
    EXPECT_THAT(reasons(j), ElementsAre(reason)) << fun;
  }
  for (const char* fun : {"file.read", "file.remove_backup", "pkg.install", "user.add", "system.get_computer_name"})
    EXPECT_EQ(level({.fun = fun, .tgt_json = "\"minion-a\"", .minions = 1}), RiskLevel::none) << fun;
}

TEST(AuditDefaults, KillAllJobsIsMedium) {
  EXPECT_THAT(reasons({.fun = "saltutil.kill_all_jobs", .tgt_json = "\"a\"", .minions = 1}),
              ElementsAre("kill-all-jobs: kills every running job on the minions"));
  EXPECT_EQ(level({.fun = "saltutil.kill_job", .tgt_json = "\"a\"", .minions = 1}), RiskLevel::none);
}

TEST(AuditDefaults, BroadTargetAboveThousandMinionsIsLow) {
  EXPECT_THAT(reasons({.fun = "test.ping", .tgt_json = "\"web*\"", .minions = 1001}),
              ElementsAre("broad-target: more than 1000 minions targeted"));
  EXPECT_EQ(level({.fun = "test.ping", .tgt_json = "\"web*\"", .minions = 1000}), RiskLevel::none);
  // Stacks with the others, highest first.
  EXPECT_THAT(reasons({.fun = "cmd.run", .arg_json = R"(["rm -rf /"])", .minions = 5000}),
              ElementsAre(HasSubstr("destructive-shell-command"), HasSubstr("shell-on-all-minions"),
                          HasSubstr("broad-target")));
  EXPECT_EQ(level({.fun = "cmd.run", .arg_json = R"(["rm -rf /"])", .minions = 5000}), RiskLevel::critical);
}

TEST(AuditDefaults, NoArgumentsAtAll) {
  const Auditor& a = defaults();
  EXPECT_EQ(a.assess({"cmd.run", nullptr, nullptr, "", 0, ""}).level, RiskLevel::none);
  EXPECT_EQ(a.assess({"system.reboot", nullptr, nullptr, "", 0, ""}).level, RiskLevel::high);
}

TEST(AuditDefaults, HugeArgumentIsSearchedWithoutBlowingTheStack) {
  std::string script;
  while (script.size() < (1u << 20)) script += "dd a a a a a a a a echo ";
  std::string tail = script + "; rm -rf /srv/data";
  const auto quiet = from_json("[\"" + script + "\"]");
  const auto loud = from_json("[\"" + tail + "\"]");
  const auto tgt = from_json("\"a\"");
  EXPECT_EQ(defaults().assess({"cmd.run", &quiet.get(), &tgt.get(), "glob", 1, "root"}).level, RiskLevel::none);
  EXPECT_EQ(defaults().assess({"cmd.run", &loud.get(), &tgt.get(), "glob", 1, "root"}).level, RiskLevel::critical);
}

// --- real captures -------------------------------------------------------------

// The data of the first "salt/job/<jid>/new" event of a JSON-lines capture.
msgpack::object_handle new_event(const std::string& name) {
  std::ifstream in(salttap::testing::captures_dir() / name);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("/new\"") == std::string::npos) continue;
    return from_json(line);
  }
  ADD_FAILURE() << "no new event in " << name;
  return from_json("{}");
}

Risk assess_capture(const std::string& name) {
  const auto h = new_event(name);
  const msgpack::object& data = *tap::map_find(h.get(), "data");
  const msgpack::object* minions = tap::map_find(data, "minions");
  return defaults().assess({*tap::as_string(*tap::map_find(data, "fun")), tap::map_find(data, "arg"),
                            tap::map_find(data, "tgt"), *tap::as_string(*tap::map_find(data, "tgt_type")),
                            minions ? minions->via.array.size : 0, *tap::as_string(*tap::map_find(data, "user"))});
}

TEST(AuditCaptures, RealNewEvents) {
  EXPECT_EQ(assess_capture("salt-3006.25/cmd_run_echo.jsonl").level, RiskLevel::high);
  EXPECT_EQ(assess_capture("salt-3006.25/state_apply_test_true.jsonl").level, RiskLevel::none);
  EXPECT_EQ(assess_capture("salt-3006.25/state_apply_change.jsonl").level, RiskLevel::medium);
  EXPECT_EQ(assess_capture("salt-3006.25/test_arg_compound.jsonl").level, RiskLevel::none);
  EXPECT_EQ(assess_capture("salt-3006.25/test_ping.jsonl").level, RiskLevel::none);
}

// --- custom rules ----------------------------------------------------------------

TEST(AuditRules, AllConditionsMustHold) {
  AuditRule r{.name = "junior-pkg",
              .level = RiskLevel::high,
              .reason = "pkg by a junior",
              .funs = {"pkg.*"},
              .min_minions = 10,
              .users = {"intern-*"},
              .test = AuditRule::Test::without_test};
  const Auditor a({r});
  auto run = [&](const Job& j) { return assess(a, j).level; };
  EXPECT_EQ(run({.fun = "pkg.install", .tgt_json = "\"web*\"", .minions = 10, .user = "intern-bob"}), RiskLevel::high);
  EXPECT_EQ(run({.fun = "pkg.install", .tgt_json = "\"web*\"", .minions = 9, .user = "intern-bob"}), RiskLevel::none);
  EXPECT_EQ(run({.fun = "pkg.install", .tgt_json = "\"web*\"", .minions = 10, .user = "root"}), RiskLevel::none);
  EXPECT_EQ(run({.fun = "cmd.run", .tgt_json = "\"web*\"", .minions = 10, .user = "intern-bob"}), RiskLevel::none);
  EXPECT_EQ(run({.fun = "pkg.install",
                 .arg_json = R"([{"__kwarg__": true, "test": true}])",
                 .minions = 10,
                 .user = "intern-bob"}),
            RiskLevel::none);
}

TEST(AuditRules, WithTestAndEmptyReason) {
  const Auditor a({AuditRule{.name = "dry-run", .level = RiskLevel::low, .test = AuditRule::Test::with_test}});
  EXPECT_THAT(assess(a, {.fun = "state.apply", .arg_json = R"(["test=true"])"}).reasons, ElementsAre("dry-run"));
  EXPECT_TRUE(assess(a, {.fun = "state.apply"}).reasons.empty());
}

TEST(AuditRules, BadRegexNamesTheRule) {
  try {
    Auditor a({AuditRule{.name = "broken-rule", .arg_patterns = {"ok", "(unclosed"}}});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("broken-rule"));
    EXPECT_THAT(e.what(), HasSubstr("(unclosed"));
  }
}

TEST(AuditRules, RenderArgs) {
  const auto arg = from_json(R"([1, "two", -3, 1.5, true, null, ["a", 2],
                                {"__kwarg__": true, "kw": 3, "nested": {"a": [1, 2]}, "s": "x y"}])");
  EXPECT_THAT(render_args(&arg.get()), ElementsAre("1", "two", "-3", "1.5", "True", "None", "['a', 2]", "kw=3",
                                                   "nested={'a': [1, 2]}", "s=x y"));
  EXPECT_TRUE(render_args(nullptr).empty());
}

TEST(AuditRules, LevelNames) {
  for (RiskLevel l : {RiskLevel::none, RiskLevel::low, RiskLevel::medium, RiskLevel::high, RiskLevel::critical})
    EXPECT_EQ(parse_risk_level(to_string(l)), l);
  EXPECT_EQ(parse_risk_level("HIGH"), RiskLevel::high);
  EXPECT_EQ(parse_risk_level("severe"), std::nullopt);
  EXPECT_EQ(to_string(RiskLevel::critical), "critical");
}

// --- YAML ----------------------------------------------------------------------------

TEST(AuditYaml, FullRule) {
  const auto rules = parse_audit_rules(YAML::Load(R"(
- name: prod-shell
  level: critical
  reason: shell on production
  funs: [cmd.*, "ssh.*"]
  arg_patterns: ['\bshutdown\b']
  target_all: true
  min_minions: 3
  users: [alice, "ops-*"]
  test: without_test
- name: minimal
  funs: pkg.install
)"));
  ASSERT_EQ(rules.size(), 2u);
  const AuditRule& r = rules[0];
  EXPECT_EQ(r.name, "prod-shell");
  EXPECT_EQ(r.level, RiskLevel::critical);
  EXPECT_EQ(r.reason, "shell on production");
  EXPECT_THAT(r.funs, ElementsAre("cmd.*", "ssh.*"));
  EXPECT_THAT(r.arg_patterns, ElementsAre("\\bshutdown\\b"));
  EXPECT_TRUE(r.target_all);
  EXPECT_EQ(r.min_minions, 3u);
  EXPECT_THAT(r.users, ElementsAre("alice", "ops-*"));
  EXPECT_EQ(r.test, AuditRule::Test::without_test);
  EXPECT_EQ(rules[1].level, RiskLevel::medium);
  EXPECT_THAT(rules[1].funs, ElementsAre("pkg.install"));

  const Auditor a(rules);
  EXPECT_EQ(assess(a, {.fun = "cmd.run", .arg_json = R"(["shutdown -h now"])", .minions = 3, .user = "ops-1"}).level,
            RiskLevel::critical);
  EXPECT_EQ(assess(a, {.fun = "cmd.run", .arg_json = R"(["shutdownx"])", .minions = 3, .user = "ops-1"}).level,
            RiskLevel::none);
  EXPECT_TRUE(parse_audit_rules(YAML::Load("")).empty());
  EXPECT_TRUE(parse_audit_rules(YAML::Load("[]")).empty());
}

void expect_yaml_error(const std::string& yaml, const std::vector<std::string>& parts) {
  salttap::testing::expect_config_error([](const YAML::Node& node) { return parse_audit_rules(node); }, yaml, parts);
}

TEST(AuditYaml, Errors) {
  expect_yaml_error("- name: r1\n  colour: red\n", {"'r1'", "colour", "unknown key"});
  expect_yaml_error("- name: r1\n  level: severe\n", {"'r1'", "level"});
  expect_yaml_error("- name: r1\n  test: maybe\n", {"'r1'", "test"});
  expect_yaml_error("- name: r1\n  min_minions: -1\n", {"'r1'", "min_minions"});
  expect_yaml_error("- name: r1\n  min_minions: lots\n", {"'r1'", "min_minions"});
  expect_yaml_error("- name: r1\n  target_all: perhaps\n", {"'r1'", "target_all"});
  expect_yaml_error("- name: r1\n  funs: {a: b}\n", {"'r1'", "funs"});
  expect_yaml_error("- name: r1\n  users: [[a]]\n", {"'r1'", "users"});
  expect_yaml_error("- name: r1\n  arg_patterns: ['(oops']\n", {"'r1'", "arg_patterns", "(oops"});
  expect_yaml_error("- name: r1\n  reason: [a]\n", {"'r1'", "reason"});
  expect_yaml_error("- level: high\n", {"#1", "name"});
  expect_yaml_error("- name: r1\n- name: r1\n", {"'r1'", "duplicate"});
  expect_yaml_error("- just a string\n", {"#1", "mapping"});
  expect_yaml_error("name: r1\n", {"list"});
}

}  // namespace
}  // namespace salttap::correlator
