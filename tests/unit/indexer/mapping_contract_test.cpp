// The document contract against the index contract: every field of every
// sample document (tests/golden/ndjson/**/*.ndjson, `_bulk`-style action +
// source line pairs) must exist in its kind's embedded template with a type
// that accepts the value. A field the mapping lacks would be silently
// unsearchable (dynamic: false), a wrong type would be a rejection.
//
// samples.ndjson holds hand-written documents of every kind (docs/documents.md, "Field reference");
// the per-capture golden files next to it are checked the same way as they
// appear.

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "indexer/index_layout.h"
#include "indexer/index_templates.h"
#include "indexer/internal/embedded_mappings.h"

namespace salttap::indexer {
namespace {

namespace fs = std::filesystem;
using rapidjson::Value;

const fs::path kGoldenDir = fs::path(SALTTAP_SOURCE_DIR) / "tests/golden/ndjson";
constexpr std::size_t kMaxFieldsPerMapping = 200;

rapidjson::Document parse_json(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  return d;
}

std::string_view type_of(const Value& field) {
  const auto it = field.FindMember("type");
  if (it == field.MemberEnd() || !it->value.IsString()) return "object";  // properties without a type
  return {it->value.GetString(), it->value.GetStringLength()};
}

bool disabled(const Value& field) {
  const auto it = field.FindMember("enabled");
  return it != field.MemberEnd() && it->value.IsBool() && !it->value.GetBool();
}

const Value* properties_of(const Value& field) {
  if (!field.IsObject()) return nullptr;
  const auto it = field.FindMember("properties");
  return it == field.MemberEnd() ? nullptr : &it->value;
}

// Mapped fields the way the engines count them (index.mapping.total_fields.limit):
// every property, objects included.
std::size_t count_fields(const Value& properties) {
  std::size_t n = 0;
  for (const auto& m : properties.GetObject()) {
    ++n;
    if (const auto* sub = properties_of(m.value)) n += count_fields(*sub);
  }
  return n;
}

void collect_leaves(const Value& properties, const std::string& prefix, std::set<std::string>& out) {
  for (const auto& m : properties.GetObject()) {
    const std::string path = prefix + m.name.GetString();
    if (const auto* sub = properties_of(m.value))
      collect_leaves(*sub, path + ".", out);
    else
      out.insert(path);
  }
}

struct Mapping {
  rapidjson::Document doc;
  const Value* properties = nullptr;
};

const std::map<std::string, Mapping>& mappings() {
  static const auto* all = [] {
    auto* m = new std::map<std::string, Mapping>;
    std::vector<std::string_view> kinds(std::begin(kIndexKinds), std::end(kIndexKinds));
    kinds.insert(kinds.end(), std::begin(kEntityKinds), std::end(kEntityKinds));
    for (const auto kind : kinds) {
      Mapping& entry = (*m)[std::string(kind)];
      const std::string_view text = embedded_mapping(kind);
      entry.doc.Parse(text.data(), text.size());
      if (entry.doc.HasParseError() || !entry.doc.IsObject()) continue;
      const auto mp = entry.doc.FindMember("mappings");
      if (mp != entry.doc.MemberEnd()) entry.properties = properties_of(mp->value);
    }
    return m;
  }();
  return *all;
}

// What a JSON value may go into; empty when compatible.
std::string type_problem(const Value& value, std::string_view mapped) {
  auto one_of = [&](std::initializer_list<std::string_view> types) {
    return std::find(types.begin(), types.end(), mapped) != types.end();
  };
  if (value.IsNull()) return {};
  if (value.IsString()) return one_of({"keyword", "text", "date", "match_only_text", "wildcard"}) ? "" : "a string";
  if (value.IsBool()) return one_of({"boolean"}) ? "" : "a boolean";
  if (value.IsInt64() || value.IsUint64())
    return one_of({"long", "integer", "short", "byte", "double", "float"}) ? "" : "an integer";
  if (value.IsDouble()) return one_of({"double", "float"}) ? "" : "a float";
  if (value.IsObject()) return mapped == "object" ? "" : "an object";
  return "an unexpected value";
}

struct Finding {
  std::size_t count = 0;
  std::string first_seen;
};

class ContractChecker {
 public:
  // One document: every field path must be mapped with a compatible type.
  void check(std::string_view kind, const Value& source, const std::string& where) {
    const auto it = mappings().find(std::string(kind));
    if (it == mappings().end() || !it->second.properties) {
      note(fmt::format("[{}] documents of an index kind without a template", kind), where);
      return;
    }
    ++documents_[std::string(kind)];
    walk(kind, source, *it->second.properties, "", where);
  }

  void report() const {
    for (const auto& [message, f] : findings_)
      ADD_FAILURE() << message << " (" << f.count << "x, first in " << f.first_seen << ")";
  }
  const std::map<std::string, std::size_t>& documents() const { return documents_; }
  std::set<std::string> seen_paths(std::string_view kind) const {
    const auto it = seen_.find(std::string(kind));
    return it == seen_.end() ? std::set<std::string>() : it->second;
  }

 private:
  void note(std::string message, const std::string& where) {
    Finding& f = findings_[std::move(message)];
    if (f.count++ == 0) f.first_seen = where;
  }

  void walk(std::string_view kind, const Value& object, const Value& properties, const std::string& prefix,
            const std::string& where) {
    for (const auto& m : object.GetObject()) {
      const std::string path = prefix + std::string(m.name.GetString(), m.name.GetStringLength());
      const auto field = properties.FindMember(m.name);
      if (field == properties.MemberEnd()) {
        note(fmt::format("[{}] field '{}' is not in mappings/{}.json", kind, path, kind), where);
        continue;
      }
      seen_[std::string(kind)].insert(path);
      // Raw and whole-object fields take anything: nothing below is mapped.
      if (disabled(field->value) || type_of(field->value) == kFlatPlaceholder) continue;
      check_value(kind, m.value, field->value, path, where);
    }
  }

  void check_value(std::string_view kind, const Value& value, const Value& field, const std::string& path,
                   const std::string& where) {
    if (value.IsArray()) {  // arrays take the element's mapping (arrays of objects: object, not nested)
      for (const auto& element : value.GetArray()) check_value(kind, element, field, path, where);
      return;
    }
    const std::string_view type = type_of(field);
    if (const std::string problem = type_problem(value, type); !problem.empty()) {
      note(fmt::format("[{}] field '{}' is mapped as {} but the document has {}", kind, path, type, problem), where);
      return;
    }
    if (value.IsObject()) {
      const Value* props = properties_of(field);
      if (!props) {
        note(fmt::format("[{}] object field '{}' has no properties in mappings/{}.json", kind, path, kind), where);
        return;
      }
      walk(kind, value, *props, path + ".", where);
    }
  }

  std::map<std::string, Finding> findings_;
  std::map<std::string, std::size_t> documents_;
  std::map<std::string, std::set<std::string>> seen_;
};

// "salt-returns-2026.11.29" -> "returns": the first '-'-separated part after
// the prefix that names a kind.
std::string kind_of_index(std::string_view index) {
  std::size_t pos = index.find('-');
  while (pos != std::string_view::npos) {
    const std::size_t end = index.find('-', pos + 1);
    const std::string_view part = index.substr(pos + 1, end == std::string_view::npos ? end : end - pos - 1);
    for (const auto kind : kIndexKinds)
      if (part == kind) return std::string(kind);
    for (const auto kind : kEntityKinds)
      if (part == kind) return std::string(kind);
    pos = end;
  }
  return {};
}

std::vector<fs::path> ndjson_files() {
  std::vector<fs::path> files;
  if (fs::is_directory(kGoldenDir))
    for (const auto& e : fs::recursive_directory_iterator(kGoldenDir))
      if (e.is_regular_file() && e.path().extension() == ".ndjson") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Feeds every action + source pair of `file` to the checker; returns the
// number of documents. Malformed lines fail the test.
std::size_t check_file(const fs::path& file, ContractChecker& checker) {
  std::ifstream in(file, std::ios::binary);
  const std::string rel = fs::relative(file, fs::path(SALTTAP_SOURCE_DIR)).string();
  std::string action_line, source_line;
  std::size_t line_no = 0, docs = 0;
  while (std::getline(in, action_line)) {
    ++line_no;
    if (action_line.empty()) continue;
    const auto action = parse_json(action_line);
    if (action.HasParseError() || !action.IsObject() || action.MemberCount() != 1) {
      ADD_FAILURE() << rel << ":" << line_no << ": not a bulk action line";
      return docs;
    }
    const auto& op = *action.MemberBegin();
    const std::string op_name = op.name.GetString();
    if (op_name == "delete") continue;  // no source line
    const auto index = op.value.IsObject() ? op.value.FindMember("_index") : op.value.MemberEnd();
    const std::size_t action_no = line_no;
    if (!std::getline(in, source_line)) {
      ADD_FAILURE() << rel << ":" << action_no << ": action without a source line";
      return docs;
    }
    ++line_no;
    if (index == op.value.MemberEnd() || !index->value.IsString()) {
      ADD_FAILURE() << rel << ":" << action_no << ": action without _index";
      continue;
    }
    const std::string index_name = index->value.GetString();
    const std::string kind = kind_of_index(index_name);
    if (kind.empty()) {
      ADD_FAILURE() << rel << ":" << action_no << ": index " << index_name << " names no salttap index kind";
      continue;
    }
    auto source = parse_json(source_line);
    if (source.HasParseError() || !source.IsObject()) {
      ADD_FAILURE() << rel << ":" << line_no << ": [" << kind << "] source line is not a JSON object";
      continue;
    }
    const Value* doc = &source;
    if (op_name == "update") {  // {"doc": {...}}
      const auto d = source.FindMember("doc");
      if (d == source.MemberEnd() || !d->value.IsObject()) continue;
      doc = &d->value;
    }
    checker.check(kind, *doc, fmt::format("{}:{}", rel, line_no));
    ++docs;
  }
  return docs;
}

// Dates parse ISO 8601 and epoch millis alike; bounded text copies skip norms.
void check_conventions(const Value& properties, const std::string& prefix) {
  for (const auto& m : properties.GetObject()) {
    const std::string path = prefix + m.name.GetString();
    const std::string_view type = type_of(m.value);
    if (type == "date") {
      const auto format = m.value.FindMember("format");
      EXPECT_TRUE(format != m.value.MemberEnd() &&
                  std::string_view(format->value.GetString()) == "strict_date_optional_time||epoch_millis")
          << path;
    } else if (type == "text") {
      const auto norms = m.value.FindMember("norms");
      EXPECT_TRUE(norms != m.value.MemberEnd() && norms->value.IsFalse()) << path;
    }
    if (const auto* sub = properties_of(m.value)) check_conventions(*sub, path + ".");
  }
}

TEST(MappingContract, EveryTemplateParsesIsNotDynamicAndStaysSmall) {
  for (const auto kind : kIndexKinds) {
    SCOPED_TRACE(std::string(kind));
    const auto& m = mappings().at(std::string(kind));
    ASSERT_FALSE(m.doc.HasParseError()) << "mappings/" << kind << ".json does not parse";
    ASSERT_TRUE(m.doc.IsObject());
    const auto mp = m.doc.FindMember("mappings");
    ASSERT_NE(mp, m.doc.MemberEnd());
    const auto dynamic = mp->value.FindMember("dynamic");
    ASSERT_NE(dynamic, mp->value.MemberEnd()) << "no 'dynamic' at the mapping's root";
    EXPECT_TRUE(dynamic->value.IsFalse()) << "'dynamic' must be false (kept in _source, never a rejection)";
    ASSERT_TRUE(m.properties && m.properties->IsObject());
    EXPECT_LE(count_fields(*m.properties), kMaxFieldsPerMapping);
    const auto settings = m.doc.FindMember("settings");
    ASSERT_NE(settings, m.doc.MemberEnd());
    const auto malformed = settings->value.FindMember("index.mapping.ignore_malformed");
    ASSERT_NE(malformed, settings->value.MemberEnd());
    EXPECT_TRUE(malformed->value.IsTrue());
    check_conventions(*m.properties, "");
  }
}

TEST(MappingContract, ResolvedTemplatesParseForEveryServerShape) {
  for (const auto kind : kIndexKinds)
    for (const auto api : {TemplateApi::composable, TemplateApi::legacy})
      for (const std::string_view flat : {"flattened", "flat_object", ""}) {
        TemplateOptions options;
        options.api = api;
        options.flat_type = flat;
        const std::string body = template_body(kind, IndexLayout{}, TemplateSettings{}, options);
        const auto doc = parse_json(body);
        ASSERT_FALSE(doc.HasParseError()) << body;
        EXPECT_EQ(body.find(kFlatPlaceholder), std::string::npos) << body;  // never reaches a server
      }
  EXPECT_TRUE(has_flat_field("returns"));
  EXPECT_FALSE(has_flat_field("jobs"));
}

TEST(MappingContract, PoliciesParse) {
  EXPECT_FALSE(parse_json(ilm_policy_body(30)).HasParseError());
  const std::string ism = ism_policy_body(30, IndexLayout{}, kIndexKinds);
  EXPECT_FALSE(parse_json(ism).HasParseError());
  EXPECT_EQ(ism.find("{retention_days}"), std::string::npos);
  EXPECT_EQ(ism.find("{index_patterns}"), std::string::npos);
}

TEST(MappingContract, HandWrittenSamplesCoverEveryKindAndEveryMappedField) {
  ContractChecker checker;
  const std::size_t docs = check_file(kGoldenDir / "samples.ndjson", checker);
  checker.report();
  EXPECT_GT(docs, 0u);
  for (const auto kind : kIndexKinds) {
    SCOPED_TRACE(std::string(kind));
    EXPECT_GT(checker.documents().count(std::string(kind)), 0u) << "samples.ndjson has no " << kind << " document";
    // The samples show every mapped field, so the engine test sees each typed.
    std::set<std::string> mapped;
    collect_leaves(*mappings().at(std::string(kind)).properties, "", mapped);
    const auto seen = checker.seen_paths(kind);
    for (const auto& path : mapped)
      EXPECT_TRUE(seen.count(path)) << "mapped field '" << path << "' appears in no " << kind << " sample";
  }
}

TEST(MappingContract, EveryGoldenDocumentFitsItsTemplate) {
  ContractChecker checker;
  const auto files = ndjson_files();
  ASSERT_FALSE(files.empty()) << "no *.ndjson under " << kGoldenDir;
  std::size_t docs = 0;
  for (const auto& file : files) docs += check_file(file, checker);
  checker.report();
  EXPECT_GT(docs, 0u);
  std::ostringstream summary;
  for (const auto& [kind, n] : checker.documents()) summary << kind << "=" << n << " ";
  std::cout << "[ contract ] " << files.size() << " files, " << docs << " documents: " << summary.str() << "\n";
}

// The checker itself: a field the mapping lacks fails, naming field and kind.
TEST(MappingContract, CheckerNamesUnmappedFieldsAndWrongTypes) {
  ContractChecker checker;
  const auto doc = parse_json(R"({"jid":"1","counts":{"expected":"three","bogus":1},"surprise":{"a":1},
    "failures":[{"minion":"m","reason":"r","extra":true}],"args":{"anything":[1,{"x":null}]},"settled_at":null})");
  checker.check("jobs", doc, "inline");
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    checker.report();
  }
  std::vector<std::string> messages;
  for (int i = 0; i < failures.size(); ++i) messages.push_back(failures.GetTestPartResult(i).message());
  auto has = [&](std::string_view needle) {
    return std::any_of(messages.begin(), messages.end(),
                       [&](const auto& m) { return m.find(needle) != std::string::npos; });
  };
  EXPECT_EQ(messages.size(), 4u);
  EXPECT_TRUE(has("[jobs] field 'counts.expected' is mapped as long but the document has a string"));
  EXPECT_TRUE(has("[jobs] field 'counts.bogus' is not in mappings/jobs.json"));
  EXPECT_TRUE(has("[jobs] field 'surprise' is not in mappings/jobs.json"));
  EXPECT_TRUE(has("[jobs] field 'failures.extra' is not in mappings/jobs.json"));
  EXPECT_EQ(kind_of_index("salt-returns-2026.11.29"), "returns");
  EXPECT_EQ(kind_of_index("my-salt-deadletter-2026.11.29"), "deadletter");
  EXPECT_EQ(kind_of_index("salt-states"), "states");
  EXPECT_EQ(kind_of_index("salt-other-2026.11.29"), "");
}

}  // namespace
}  // namespace salttap::indexer
