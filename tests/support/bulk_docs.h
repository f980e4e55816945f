#pragma once
// A bulk document read back as a test checks it: its action line's operation,
// _index, _id and version (0 when it has none), and its _source parsed.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "indexer/document.h"

namespace salttap::testing {

struct ParsedBulkDoc {
  std::string op, index, id;
  std::int64_t version = 0;
  rapidjson::Document source;
};

inline ParsedBulkDoc parse_bulk_doc(const indexer::BulkDoc& b) {
  const auto nl = b.ndjson.find('\n');
  rapidjson::Document action;
  action.Parse(b.ndjson.data(), nl);
  const auto& op = *action.MemberBegin();
  ParsedBulkDoc d;
  d.op = op.name.GetString();
  d.index = op.value["_index"].GetString();
  d.id = op.value["_id"].GetString();
  if (op.value.HasMember("version")) d.version = op.value["version"].GetInt64();
  d.source.Parse(b.ndjson.data() + nl + 1, b.ndjson.size() - nl - 2);  // the line, less its newline
  return d;
}

inline std::vector<ParsedBulkDoc> parse_bulk_docs(std::span<const indexer::BulkDoc> docs) {
  std::vector<ParsedBulkDoc> out;
  for (const auto& b : docs) out.push_back(parse_bulk_doc(b));
  return out;
}

}  // namespace salttap::testing
