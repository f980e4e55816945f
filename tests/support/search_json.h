#pragma once
// What the tests of salttap's searches share: a request body parsed (a parse
// error fails the test), one of its values named by a JSON pointer as text, a
// row of an answer checked field by field, and an engine's search answer
// holding given _source documents.

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

namespace salttap::testing {

inline rapidjson::Document parse_body(const std::string& body) {
  rapidjson::Document d;
  d.Parse(body.c_str());
  EXPECT_FALSE(d.HasParseError()) << body;
  return d;
}

// The value at `pointer` as text: strings as they are, numbers printed,
// "null", "<absent>", or "<other>" for arrays, objects and booleans.
inline std::string json_at(const rapidjson::Value& d, const char* pointer) {
  const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(d);
  if (!v) return "<absent>";
  if (v->IsString()) return v->GetString();
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  if (v->IsDouble()) return std::to_string(v->GetDouble());
  if (v->IsNull()) return "null";
  return "<other>";
}

// One row of a JSON answer (the object at the pointer `row`, e.g. "/jobs/0"),
// field by field: each relative pointer's value as json_at() gives it against
// the expected text. A mismatch names the whole pointer.
inline void expect_row(const rapidjson::Value& d, const std::string& row,
                       std::initializer_list<std::pair<std::string, std::string>> fields) {
  for (const auto& [field, want] : fields) {
    const std::string pointer = row + "/" + field;
    EXPECT_EQ(json_at(d, pointer.c_str()), want) << pointer;
  }
}

// A _search answer whose hits are `sources`, in that order.
inline std::string search_hits(const std::vector<std::string>& sources) {
  std::string out = R"({"took":1,"_shards":{"total":1,"successful":1,"failed":0},"hits":{"total":{"value":)" +
                    std::to_string(sources.size()) + R"(,"relation":"eq"},"hits":[)";
  for (std::size_t i = 0; i < sources.size(); ++i)
    out += (i ? "," : "") + std::string(R"({"_index":"salt-jobs-2025.11.29","_id":"x","_source":)") + sources[i] + "}";
  return out + "]}}";
}

}  // namespace salttap::testing
