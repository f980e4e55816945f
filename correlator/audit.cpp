#include "correlator/audit.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "common/enum_names.h"
#include "common/text.h"
#include "common/yaml_fields.h"
#include "correlator/run_kind.h"
#include "tap/event.h"

namespace salttap::correlator {
namespace {

constexpr std::size_t kMaxRenderDepth = 64;

bool ieq(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto l = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
           return l(x) == l(y);
         });
}

void render(std::string& out, const msgpack::object& o, bool top, std::size_t depth) {
  if (depth > kMaxRenderDepth) {
    out += "...";
    return;
  }
  switch (o.type) {
    case msgpack::type::STR:
    case msgpack::type::BIN: {
      const std::string_view s = *tap::as_string(o);
      if (top) {
        out += s;
      } else {
        out += '\'';
        out += s;
        out += '\'';
      }
      return;
    }
    case msgpack::type::NIL:
      out += "None";
      return;
    case msgpack::type::BOOLEAN:
      out += o.via.boolean ? "True" : "False";
      return;
    case msgpack::type::POSITIVE_INTEGER:
      out += std::to_string(o.via.u64);
      return;
    case msgpack::type::NEGATIVE_INTEGER:
      out += std::to_string(o.via.i64);
      return;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: {
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof buf, o.via.f64);
      out.append(buf, r.ptr);
      return;
    }
    case msgpack::type::ARRAY:
      out += '[';
      for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
        if (i) out += ", ";
        render(out, o.via.array.ptr[i], false, depth + 1);
      }
      out += ']';
      return;
    case msgpack::type::MAP:
      out += '{';
      for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
        if (i) out += ", ";
        render(out, o.via.map.ptr[i].key, false, depth + 1);
        out += ": ";
        render(out, o.via.map.ptr[i].val, false, depth + 1);
      }
      out += '}';
      return;
    default:
      out += "<ext>";
      return;
  }
}

bool targets_all(const AuditInput& in) {
  if (!in.tgt) return false;
  const auto t = tap::as_string(*in.tgt);
  if (!t) return false;
  if (in.tgt_type.empty() || in.tgt_type == "glob" || in.tgt_type == "compound") return *t == "*";
  if (in.tgt_type == "pcre") return *t == ".*";
  return false;
}

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

}  // namespace

std::string_view to_string(RiskLevel level) { return enumerator_name(level, "none"); }

std::optional<RiskLevel> parse_risk_level(std::string_view text) {
  for (RiskLevel l : {RiskLevel::none, RiskLevel::low, RiskLevel::medium, RiskLevel::high, RiskLevel::critical})
    if (ieq(text, to_string(l))) return l;
  return std::nullopt;
}

std::vector<std::string> render_args(const msgpack::object* arg) {
  std::vector<std::string> out;
  if (!arg) return out;
  if (arg->type != msgpack::type::ARRAY) {  // not a list: one text
    out.emplace_back();
    render(out.back(), *arg, true, 0);
    return out;
  }
  for (std::uint32_t i = 0; i < arg->via.array.size; ++i) {
    const msgpack::object& a = arg->via.array.ptr[i];
    if (!is_kwargs(a)) {
      out.emplace_back();
      render(out.back(), a, true, 0);
      continue;
    }
    for (std::uint32_t k = 0; k < a.via.map.size; ++k) {
      const msgpack::object_kv& kv = a.via.map.ptr[k];
      if (const auto key = tap::as_string(kv.key); key && *key == "__kwarg__") continue;
      std::string s;
      render(s, kv.key, true, 0);
      s += '=';
      render(s, kv.val, true, 0);
      out.push_back(std::move(s));
    }
  }
  return out;
}

bool Auditor::Globs::matches(std::string_view s) const {
  if (any) return true;
  for (const std::string& e : exact)
    if (e == s) return true;
  for (const std::string& p : prefixes)
    if (s.starts_with(p)) return true;
  for (const std::string& g : globs)
    if (glob_match(g, s)) return true;
  return false;
}

Auditor::Auditor(std::vector<AuditRule> rules) : rules_(std::move(rules)) {
  auto globs = [](const std::vector<std::string>& patterns) {
    Globs g;
    g.any = patterns.empty();
    for (const std::string& p : patterns) {
      if (!has_glob_chars(p))
        g.exact.push_back(p);
      else if (p.back() == '*' && !has_glob_chars(std::string_view(p).substr(0, p.size() - 1)))
        g.prefixes.push_back(p.substr(0, p.size() - 1));
      else
        g.globs.push_back(p);
    }
    return g;
  };
  compiled_.reserve(rules_.size());
  for (const AuditRule& r : rules_) {
    Compiled c;
    c.funs = globs(r.funs);
    c.users = globs(r.users);
    try {
      c.args = detail::PatternSet(r.arg_patterns);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("audit rule '" + r.name + "': arg_patterns: " + e.what());
    }
    any_arg_patterns_ = any_arg_patterns_ || !r.arg_patterns.empty();
    compiled_.push_back(std::move(c));
  }
}

Risk Auditor::assess(const AuditInput& in) const {
  const bool all = targets_all(in);
  const bool test = has_test_true(in.arg);
  std::vector<std::string> texts;
  bool rendered = false;

  std::vector<std::size_t> matched;
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    const AuditRule& r = rules_[i];
    const Compiled& c = compiled_[i];
    if (r.target_all && !all) continue;
    if (r.min_minions && in.minion_count < r.min_minions) continue;
    if (r.test == AuditRule::Test::without_test && test) continue;
    if (r.test == AuditRule::Test::with_test && !test) continue;
    if (!c.funs.matches(in.fun)) continue;
    if (!c.users.matches(in.user)) continue;
    if (!c.args.empty()) {
      if (!rendered) {
        texts = render_args(in.arg);
        rendered = true;
      }
      if (std::none_of(texts.begin(), texts.end(), [&](const std::string& t) { return c.args.search(t); })) continue;
    }
    matched.push_back(i);
  }

  Risk risk;
  std::stable_sort(matched.begin(), matched.end(),
                   [&](std::size_t a, std::size_t b) { return rules_[a].level > rules_[b].level; });
  for (const std::size_t i : matched) {
    const AuditRule& r = rules_[i];
    risk.level = std::max(risk.level, r.level);
    risk.reasons.push_back(r.reason.empty() ? r.name : r.name + ": " + r.reason);
  }
  return risk;
}

std::vector<AuditRule> Auditor::default_rules() {
  using T = AuditRule::Test;
  std::vector<AuditRule> rules;
  // rm with both a recursive and a force option, in any order or spelling:
  // -rf, -fr, -Rf, -rvf, -r -f, --recursive --force. Options end at a
  // non-option word; \b keeps "rmdir", "perform" and "farm" out.
  const std::string rm_rf =
      R"(\brm(?=(?:\s+-\S+)*?\s+(?:-[a-z]*r[a-z]*|--recursive)\b)(?=(?:\s+-\S+)*?\s+(?:-[a-z]*f[a-z]*|--force)\b))";
  rules.push_back({.name = "destructive-shell-command",
                   .level = RiskLevel::critical,
                   .reason = "argument runs rm -rf, mkfs or dd",
                   .arg_patterns = {rm_rf, R"(\bmk(e2)?fs\b)", R"(\bdd\s+(?:[^\s;|&]+\s+)*?if=)"}});
  rules.push_back({.name = "shell-on-all-minions",
                   .level = RiskLevel::high,
                   .reason = "shell command on every minion",
                   .funs = {"cmd.*"},
                   .target_all = true});
  rules.push_back({.name = "destroy-data",
                   .level = RiskLevel::high,
                   .reason = "removes files, file systems or volumes",
                   .funs = {"file.remove", "file.rmdir", "disk.wipe", "disk.format", "partition.rm", "partition.mkfs",
                            "partition.mklabel", "blockdev.wipe", "blockdev.format", "lvm.lvremove", "lvm.vgremove",
                            "lvm.pvremove"}});
  rules.push_back({.name = "power-off-or-reboot",
                   .level = RiskLevel::high,
                   .reason = "reboots or powers off minions",
                   .funs = {"system.reboot", "system.shutdown", "system.halt", "system.poweroff"}});
  rules.push_back({.name = "remove-packages-or-accounts",
                   .level = RiskLevel::high,
                   .reason = "removes packages, users or groups",
                   .funs = {"pkg.remove", "pkg.purge", "user.delete", "group.delete"}});
  rules.push_back({.name = "state-on-all-minions",
                   .level = RiskLevel::medium,
                   .reason = "state run on every minion without test=True",
                   .funs = {"state.apply", "state.highstate", "state.sls", "state.sls_id", "state.single", "state.top"},
                   .target_all = true,
                   .test = T::without_test});
  rules.push_back({.name = "kill-all-jobs",
                   .level = RiskLevel::medium,
                   .reason = "kills every running job on the minions",
                   .funs = {"saltutil.kill_all_jobs", "saltutil.term_all_jobs"}});
  rules.push_back({.name = "broad-target",
                   .level = RiskLevel::low,
                   .reason = "more than 1000 minions targeted",
                   .min_minions = 1001});
  return rules;
}

namespace {

struct RuleContext {
  std::string id;  // "audit rule 'name'" or "audit rule #n"
  std::string where(const std::string& key) const { return id + ": key '" + key + "'"; }
};

std::string scalar(const YAML::Node& v, const RuleContext& ctx, const std::string& key) {
  return yaml::scalar(v, ctx.where(key));
}

std::vector<std::string> strings(const YAML::Node& v, const RuleContext& ctx, const std::string& key) {
  return yaml::strings(v, ctx.where(key));
}

}  // namespace

std::vector<AuditRule> parse_audit_rules(const YAML::Node& node) {
  std::vector<AuditRule> rules;
  if (!node || node.IsNull()) return rules;
  if (!node.IsSequence()) throw ConfigError("audit rules: expected a list of rules");
  std::set<std::string, std::less<>> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    RuleContext ctx{"audit rule #" + std::to_string(i + 1)};
    if (!item.IsMap()) throw ConfigError(ctx.id + ": expected a mapping");
    AuditRule rule;
    if (const YAML::Node n = item["name"]; n && n.IsScalar() && !n.Scalar().empty()) {
      rule.name = n.Scalar();
      ctx.id = "audit rule '" + rule.name + "'";
    } else {
      throw ConfigError(ctx.where("name") + ": required, a non-empty string");
    }
    if (!names.insert(rule.name).second) throw ConfigError(ctx.id + ": duplicate rule name");
    for (const auto& kv : item) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
      const YAML::Node& v = kv.second;
      if (key == "name") continue;
      if (key == "level") {
        const auto level = parse_risk_level(scalar(v, ctx, key));
        if (!level) throw ConfigError(ctx.where(key) + ": expected none, low, medium, high or critical");
        rule.level = *level;
      } else if (key == "reason") {
        rule.reason = scalar(v, ctx, key);
      } else if (key == "funs") {
        rule.funs = strings(v, ctx, key);
      } else if (key == "users") {
        rule.users = strings(v, ctx, key);
      } else if (key == "arg_patterns") {
        rule.arg_patterns = strings(v, ctx, key);
        for (const std::string& p : rule.arg_patterns) {
          try {
            detail::compile_pattern(p);
          } catch (const std::invalid_argument& e) {
            throw ConfigError(ctx.where(key) + ": " + e.what());
          }
        }
      } else if (key == "target_all") {
        bool b = false;
        if (!v.IsScalar() || !YAML::convert<bool>::decode(v, b))
          throw ConfigError(ctx.where(key) + ": expected true or false");
        rule.target_all = b;
      } else if (key == "min_minions") {
        const std::string s = scalar(v, ctx, key);
        std::uint64_t n = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), n);
        if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
          throw ConfigError(ctx.where(key) + ": expected a non-negative integer");
        rule.min_minions = n;
      } else if (key == "test") {
        const std::string s = scalar(v, ctx, key);
        if (s == "any")
          rule.test = AuditRule::Test::any;
        else if (s == "without_test")
          rule.test = AuditRule::Test::without_test;
        else if (s == "with_test")
          rule.test = AuditRule::Test::with_test;
        else
          throw ConfigError(ctx.where(key) + ": expected any, without_test or with_test");
      } else {
        throw ConfigError(ctx.where(key) + ": unknown key");
      }
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace salttap::correlator
