// The metric catalog (common/metric_catalog.h) is the one list of what
// /metrics exports: every name follows the naming scheme, and the tables of
// docs/operations.md ("Metrics") hold exactly the catalog's metrics, with
// the same type, labels and label values. Every salttap_* metric name the
// documentation mentions anywhere is one of them.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/metric_catalog.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(' ') - first + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(trim(part));
  return parts;
}

std::string unquote(const std::string& s) {  // `x` -> x
  if (s.size() < 2 || s.front() != '`' || s.back() != '`') throw std::runtime_error("expected `...`: " + s);
  return s.substr(1, s.size() - 2);
}

// A metric as a row of the documentation states it, or as the catalog does:
// type, then "label: v1, v2" per label, in order.
struct Row {
  std::string type;
  std::vector<std::string> labels;
  bool operator==(const Row&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Row& r) {
  out << r.type;
  for (const auto& l : r.labels) out << "; " << l;
  return out;
}

Row row_of(const MetricSpec& spec) {
  Row r{std::string(to_string(spec.type)), {}};
  for (const MetricLabel& label : spec.labels) {
    std::string text = std::string(label.name) + ":";
    if (label.from_build || label.open) {  // documented by name: its value changes with every build, or is anyone's
      r.labels.push_back(text + " <" + std::string(label.name) + ">");
      continue;
    }
    for (std::size_t i = 0; i < label.values.size(); ++i) text += (i ? ", " : " ") + std::string(label.values[i]);
    r.labels.push_back(text);
  }
  return r;
}

// The "## Metrics" section's table rows: | `name` | type | labels | meaning |
// with labels as  `label`: `value`, `value`; `label`: ...  (or empty).
std::map<std::string, Row> documented_metrics() {
  const std::string doc = read_file(fs::path(SALTTAP_SOURCE_DIR) / "docs" / "operations.md");
  const auto begin = doc.find("\n## Metrics\n");
  if (begin == std::string::npos) throw std::runtime_error("docs/operations.md has no \"## Metrics\" section");
  const auto end = doc.find("\n## ", begin + 1);
  std::istringstream lines(doc.substr(begin, end - begin));
  std::map<std::string, Row> rows;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("| `")) continue;
    const std::vector<std::string> cells = split(line.substr(1, line.size() - 2), '|');
    if (cells.size() != 4) throw std::runtime_error("a metric row needs 4 cells: " + line);
    Row row{cells[1], {}};
    if (!cells[2].empty()) {
      for (const std::string& label : split(cells[2], ';')) {
        const auto colon = label.find(':');
        if (colon == std::string::npos) throw std::runtime_error("a label needs \"`name`: `values`\": " + label);
        std::string text = unquote(trim(label.substr(0, colon))) + ":";
        const std::vector<std::string> values = split(label.substr(colon + 1), ',');
        for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : " ") + unquote(values[i]);
        row.labels.push_back(text);
      }
    }
    const std::string name = unquote(cells[0]);
    if (!rows.emplace(name, row).second) ADD_FAILURE() << name << " is documented twice";
  }
  return rows;
}

TEST(MetricCatalog, NamesFollowTheScheme) {
  static const std::regex kName(
      "salttap_(build|config|tap|correlator|alerting|fleet|minion|indexer|spool|reconcile|ui|listener)_[a-z0-9]+(_[a-"
      "z0-9]+)"
      "*");
  static const std::regex kLabel("[a-z]+(_[a-z]+)*");
  static const std::regex kValue("[a-z0-9]+(_[a-z0-9]+)*");
  std::set<std::string_view> names;
  for (const MetricSpec& spec : metric_catalog()) {
    const std::string name(spec.name);
    EXPECT_TRUE(std::regex_match(name, kName)) << name;
    EXPECT_TRUE(names.insert(spec.name).second) << name << " declared twice";
    EXPECT_EQ(spec.type == MetricType::counter, name.ends_with("_total"))
        << name << ": counters, and only counters, end in _total";
    EXPECT_FALSE(name.ends_with("_sum") || name.ends_with("_count") || name.ends_with("_bucket"))
        << name << ": reserved for summaries and histograms";
    if (spec.type == MetricType::summary || spec.type == MetricType::histogram) {
      EXPECT_TRUE(name.ends_with("_seconds")) << name << ": a summary or histogram of seconds";
    }
    EXPECT_EQ(spec.type == MetricType::histogram, !spec.buckets.empty()) << name << ": buckets are a histogram's";
    for (std::size_t i = 1; i < spec.buckets.size(); ++i)
      EXPECT_LT(spec.buckets[i - 1], spec.buckets[i]) << name << ": bucket bounds ascend";
    for (const MetricLabel& label : spec.labels) EXPECT_NE(label.name, "le") << name << ": le is the histogram's";
    for (const char* unit : {"_milliseconds", "_ms", "_kib", "_mib", "_kb", "_mb"})
      EXPECT_EQ(name.find(unit), std::string::npos) << name << ": base units only (seconds, bytes)";
    EXPECT_FALSE(spec.help.empty()) << name;
    std::set<std::string_view> label_names;
    for (const MetricLabel& label : spec.labels) {
      EXPECT_TRUE(std::regex_match(std::string(label.name), kLabel)) << name << " " << label.name;
      EXPECT_TRUE(label_names.insert(label.name).second) << name << ": label " << label.name << " twice";
      EXPECT_EQ(label.values.empty(), label.open) << name << " " << label.name << ": listed values, unless open";
      if (label.open) continue;
      if (label.from_build) {
        EXPECT_EQ(label.values.size(), 1u) << name << " " << label.name << ": one value, the build's";
        continue;
      }
      std::set<std::string_view> values(label.values.begin(), label.values.end());
      EXPECT_EQ(values.size(), label.values.size()) << name << " " << label.name << ": a value twice";
      for (std::string_view v : label.values) EXPECT_TRUE(std::regex_match(std::string(v), kValue)) << name << " " << v;
    }
  }
}

TEST(MetricCatalog, IsIndexedById) {
  ASSERT_EQ(metric_catalog().size(), kMetricCount);
  for (std::size_t i = 0; i < kMetricCount; ++i)
    EXPECT_EQ(&metric_spec(static_cast<MetricId>(i)), &metric_catalog()[i]) << metric_catalog()[i].name;
}

TEST(MetricCatalog, OperationsDocListsEveryMetricAndNothingElse) {
  const std::map<std::string, Row> documented = documented_metrics();
  std::set<std::string> declared;
  for (const MetricSpec& spec : metric_catalog()) {
    const std::string name(spec.name);
    declared.insert(name);
    const auto doc = documented.find(name);
    if (doc == documented.end()) {
      ADD_FAILURE() << name << " is not in docs/operations.md; add the row:\n| `" << name << "` | "
                    << to_string(spec.type) << " | ... |";
      continue;
    }
    EXPECT_EQ(doc->second, row_of(spec)) << name << ": docs/operations.md differs from the catalog";
  }
  for (const auto& [name, row] : documented)
    EXPECT_TRUE(declared.contains(name)) << name << " is documented but not in common/metric_catalog.cpp";
}

TEST(MetricCatalog, EveryMetricNameTheDocsMentionExists) {
  std::set<std::string> names;
  for (const MetricSpec& spec : metric_catalog()) {
    names.emplace(spec.name);
    if (spec.type == MetricType::summary) {
      names.insert(std::string(spec.name) + "_sum");
      names.insert(std::string(spec.name) + "_count");
    }
  }
  const fs::path root(SALTTAP_SOURCE_DIR);
  std::vector<fs::path> files{root / "README.md"};
  for (const auto& entry : fs::directory_iterator(root / "docs"))
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  static const std::regex kMention("salttap_[a-z0-9_]+");
  // Salt-side names of the remediation reactor (docs/remediation.md): its file
  // (salttap_rerun.sls), its master option and data-store key, and the metadata
  // key its re-runs carry; and the test harness's module that starts salttap
  // (tests/harness/salttap_process.py, docs/testing.md). Not metrics.
  static const std::set<std::string> kNotMetrics{"salttap_rerun", "salttap_rerun_of", "salttap_process"};
  std::size_t mentions = 0;
  for (const fs::path& file : files) {
    const std::string text = read_file(file);
    for (std::sregex_iterator it(text.begin(), text.end(), kMention), end; it != end; ++it) {
      const std::string name = it->str();
      if (kNotMetrics.contains(name)) continue;
      ++mentions;
      if (name.ends_with("_")) {  // a family of names, as in `salttap_tap_*`
        EXPECT_TRUE(std::ranges::any_of(names, [&](const std::string& n) { return n.starts_with(name); }))
            << file.filename().string() << ": " << name << "* matches no metric";
      } else {
        EXPECT_TRUE(names.contains(name)) << file.filename().string() << ": " << name << " is not a metric";
      }
    }
  }
  EXPECT_GT(mentions, kMetricCount) << "the documentation was not found";
}

}  // namespace
}  // namespace salttap
