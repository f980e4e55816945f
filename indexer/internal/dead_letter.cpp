#include "indexer/internal/dead_letter.h"

#include <rapidjson/document.h>

#include <algorithm>

#include "common/json_writer.h"
#include "common/text.h"
#include "indexer/internal/document_ids.h"

namespace salttap::indexer {
namespace {

// Reasons and documents go into JSON strings: never write invalid UTF-8 (the
// engine would refuse the dead letter itself).
template <typename W>
void text(W& w, std::string_view s) {
  if (is_valid_utf8(s)) return json::string(w, s);
  std::string clean;
  append_utf8_replacing(clean, s);
  json::string(w, clean);
}

template <typename W>
void fields(W& w, const DeadLetter& d) {
  json::key(w, "@timestamp");
  json::string(w, format_utc(d.rejected_at));
  json::key(w, "index");
  text(w, d.index);
  json::key(w, "doc_id");
  text(w, d.doc_id);
  json::key(w, "status");
  w.Int(d.status);
  json::key(w, "error_type");
  text(w, d.error_type);
  json::key(w, "reason");
  text(w, d.reason);
  json::key(w, "document");
  text(w, d.document);
}

// One JSON object, its members written by `members`, and a newline,
// appended to `out`: one line of NDJSON.
template <typename Members>
void append_object_line(std::string& out, Members members) {
  json::StringOut sink{out};
  json::Writer w(sink);
  w.StartObject();
  members(w);
  w.EndObject();
  out.push_back('\n');
}

}  // namespace

DeadLetter make_dead_letter(std::string_view payload, const ItemResult& result, Micros now) {
  DeadLetter d;
  d.status = result.status;
  d.error_type = result.error_type;
  d.reason = result.reason;
  d.rejected_at = now;
  const auto eol = payload.find('\n');
  const std::string_view action = payload.substr(0, eol);
  std::string_view source = eol == std::string_view::npos ? std::string_view{} : payload.substr(eol + 1);
  if (!source.empty() && source.back() == '\n') source.remove_suffix(1);
  // A payload without a source line (malformed) is kept whole.
  d.document = std::string(source.empty() ? payload : source);

  rapidjson::Document doc;
  doc.Parse(action.data(), action.size());
  if (!doc.HasParseError() && doc.IsObject() && doc.MemberCount() == 1 && doc.MemberBegin()->value.IsObject()) {
    const auto& meta = doc.MemberBegin()->value;
    if (meta.HasMember("_index") && meta["_index"].IsString()) d.index = meta["_index"].GetString();
    if (meta.HasMember("_id") && meta["_id"].IsString()) d.doc_id = meta["_id"].GetString();
  }
  return d;
}

std::string dead_letter_ndjson(const DeadLetter& d, std::string_view dead_letter_index) {
  std::string out;
  append_object_line(out, [&](json::Writer& w) {
    json::key(w, "index");
    w.StartObject();
    json::key(w, "_index");
    json::string(w, dead_letter_index);
    if (!d.doc_id.empty()) {
      json::key(w, "_id");
      // One dead letter per original document: a resend after a restart overwrites it.
      text(w, document_id({d.index, d.doc_id}));
    }
    w.EndObject();
  });
  append_object_line(out, [&](json::Writer& w) { fields(w, d); });
  return out;
}

std::string dead_letter_file_line(const DeadLetter& d, std::string_view refused) {
  std::string out;
  append_object_line(out, [&](json::Writer& w) {
    fields(w, d);
    json::key(w, "refused");
    text(w, refused);
  });
  return out;
}

std::string dead_letter_file_name(Micros t) {
  std::string day = format_utc(t).substr(0, 10);  // YYYY-MM-DD
  std::replace(day.begin(), day.end(), '-', '.');
  return "deadletter-" + day + ".ndjson";
}

}  // namespace salttap::indexer
