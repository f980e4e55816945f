#pragma once
// Auditor: gives each published job a risk level and the reasons for it.
//
// A rule matches a job when ALL its conditions hold; the job's level is the
// highest level of the matching rules, and its reasons list every matching
// rule as "<rule name>: <reason>", highest level first (rule order within a
// level). Runs once per job (salt/job/<jid>/new), not per return.
//
// Default rules (Auditor::default_rules()):
//
// clang-format off
// | name                        | level    | funs                                        | other conditions           |
// |-----------------------------|----------|---------------------------------------------|----------------------------|
// | destructive-shell-command   | critical | any                                         | an arg matches rm -rf (1)  |
// |                             |          |                                             | mkfs (2) or dd ... if=     |
// | shell-on-all-minions        | high     | cmd.*                                       | target_all                 |
// | destroy-data                | high     | file.remove, file.rmdir, disk.wipe,         | any target                 |
// |                             |          | disk.format, partition.rm, partition.mkfs,  |                            |
// |                             |          | partition.mklabel, blockdev.wipe,           |                            |
// |                             |          | blockdev.format, lvm.lvremove,              |                            |
// |                             |          | lvm.vgremove, lvm.pvremove                  |                            |
// | power-off-or-reboot         | high     | system.reboot, system.shutdown,             | any target                 |
// |                             |          | system.halt, system.poweroff                |                            |
// | remove-packages-or-accounts | high     | pkg.remove, pkg.purge, user.delete,         | any target                 |
// |                             |          | group.delete                                |                            |
// | state-on-all-minions        | medium   | state.apply, state.highstate, state.sls,    | target_all, test:          |
// |                             |          | state.sls_id, state.single, state.top       | without_test               |
// | kill-all-jobs               | medium   | saltutil.kill_all_jobs,                     | any target                 |
// |                             |          | saltutil.term_all_jobs                      |                            |
// | broad-target                | low      | any                                         | min_minions: 1001 (>1000)  |
// (1) rm with both a recursive and a force option in any order or spelling: -rf, -fr, -Rf, -rvf, -r -f,
//     --recursive --force. (2) mkfs, mkfs.<type>, mke2fs.
// clang-format on
//
// Why these: each default destroys data, takes hosts down or removes what
// other things depend on (file.rmdir has `recurse` since 3006), or changes the
// whole fleet at once; a typo in the target or argument of any of them is an
// incident. file.directory is a state function, not a module one: its removal
// form (`clean: True`) runs through state.* and is covered by the state rule
// when fleet-wide. Killing every running job is disruptive but not
// destructive, hence medium. cmd.* includes the read-only cmd.which /
// cmd.has_exec: fail closed rather than enumerate every shell entry point.
//
// Conditions:
//   funs          fnmatch globs on `fun`; empty = any.
//   arg_patterns  case-insensitive ECMAScript regexes searched in each
//                 positional arg rendered as text (strings as is; numbers;
//                 True/False/None; lists and dicts as Python-like literals)
//                 and in each kwarg rendered as "key=value"; any hit = match;
//                 empty = any. Kwargs are the map elements of `arg` with
//                 "__kwarg__": true. Texts over 4 KiB are searched in
//                 overlapping windows (a match longer than 512 bytes may be
//                 missed; see pattern_set.h).
//   target_all    the target is the whole fleet: tgt "*" with tgt_type glob
//                 (or empty) or compound, or ".*" with tgt_type pcre.
//   min_minions   at least this many expected minions; 0 = any.
//   users         fnmatch globs on the publishing user; empty = any.
//   test          any | without_test | with_test. test=True is a kwarg `test`
//                 that is true (bool, non-zero int, or the string
//                 true/yes/on/1, any case), or a positional string "test=True"
//                 (same values).

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <msgpack.hpp>

#include "common/config_error.h"
#include "correlator/pattern_set.h"

namespace salttap::correlator {

enum class RiskLevel : std::uint8_t { none, low, medium, high, critical };

std::string_view to_string(RiskLevel level);
// "none", "low", "medium", "high", "critical" (any case).
[[nodiscard]] std::optional<RiskLevel> parse_risk_level(std::string_view text);

struct AuditRule {
  std::string name;  // e.g. "shell-on-all-minions"
  RiskLevel level = RiskLevel::medium;
  std::string reason{};                     // human text; reasons show "<name>: <reason>" (or the name alone)
  std::vector<std::string> funs{};          // function globs; empty = any
  std::vector<std::string> arg_patterns{};  // regexes on rendered args / "key=value" kwargs; empty = any
  bool target_all = false;                  // the target is the whole fleet
  std::uint64_t min_minions = 0;            // at least this many expected minions; 0 = any
  std::vector<std::string> users{};         // user globs; empty = any
  enum class Test { any, without_test, with_test } test = Test::any;
};

struct AuditInput {
  std::string_view fun;
  const msgpack::object* arg = nullptr;  // publish arg list, or nullptr
  const msgpack::object* tgt = nullptr;  // string, or list for tgt_type list; or nullptr
  std::string_view tgt_type;
  std::size_t minion_count = 0;
  std::string_view user;
};

struct Risk {
  RiskLevel level = RiskLevel::none;
  std::vector<std::string> reasons;  // "<rule name>: <reason>", highest level first
  bool operator==(const Risk&) const = default;
};

class Auditor {
 public:
  // Compiles every regex once; a bad one throws std::invalid_argument naming
  // the rule. Immutable afterwards: assess() is safe from any thread.
  explicit Auditor(std::vector<AuditRule> rules);

  Risk assess(const AuditInput& input) const;

  static std::vector<AuditRule> default_rules();

  const std::vector<AuditRule>& rules() const { return rules_; }

 private:
  struct Globs {
    std::vector<std::string> exact;     // no glob characters
    std::vector<std::string> prefixes;  // "prefix*" with no other glob characters
    std::vector<std::string> globs;     // the rest, through fnmatch
    bool any = true;                    // no globs at all
    bool matches(std::string_view s) const;
  };
  struct Compiled {
    Globs funs;
    Globs users;
    detail::PatternSet args;
  };

  std::vector<AuditRule> rules_;
  std::vector<Compiled> compiled_;
  bool any_arg_patterns_ = false;
};

// Renders a publish arg list the way arg_patterns see it: one text per
// positional arg and one "key=value" per kwarg. Exposed for tests and logs.
std::vector<std::string> render_args(const msgpack::object* arg);

// Rules from YAML: a sequence of maps with keys name (required, unique),
// level (default medium), reason, funs, arg_patterns, target_all, min_minions,
// users, test (any | without_test | with_test). funs, arg_patterns and users
// take a list or a single string. A null node gives no rules.
// Unknown keys, wrong types, bad levels and bad regexes ->
// ConfigError("audit rule '<name>': key '<key>': ...").
std::vector<AuditRule> parse_audit_rules(const YAML::Node& node);

}  // namespace salttap::correlator
