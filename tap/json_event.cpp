#include "tap/json_event.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "common/text.h"

namespace salttap::tap {
namespace {

void pack_json(msgpack::packer<msgpack::sbuffer>& pk, const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType: pk.pack_nil(); return;
    case rapidjson::kFalseType: pk.pack_false(); return;
    case rapidjson::kTrueType: pk.pack_true(); return;
    case rapidjson::kStringType: {
      pk.pack_str(v.GetStringLength());
      pk.pack_str_body(v.GetString(), v.GetStringLength());
      return;
    }
    case rapidjson::kNumberType:
      if (v.IsUint64()) pk.pack_uint64(v.GetUint64());
      else if (v.IsInt64()) pk.pack_int64(v.GetInt64());
      else pk.pack_double(v.GetDouble());
      return;
    case rapidjson::kArrayType:
      pk.pack_array(v.Size());
      for (const auto& item : v.GetArray()) pack_json(pk, item);
      return;
    case rapidjson::kObjectType: {
      if (v.MemberCount() == 1 && v.HasMember("__bytes_b64__") && v["__bytes_b64__"].IsString()) {
        const auto& s = v["__bytes_b64__"];
        const std::string raw = base64_decode(std::string_view(s.GetString(), s.GetStringLength()));
        pk.pack_bin(static_cast<std::uint32_t>(raw.size()));
        pk.pack_bin_body(raw.data(), static_cast<std::uint32_t>(raw.size()));
        return;
      }
      pk.pack_map(v.MemberCount());
      for (const auto& m : v.GetObject()) {
        pk.pack_str(m.name.GetStringLength());
        pk.pack_str_body(m.name.GetString(), m.name.GetStringLength());
        pack_json(pk, m.value);
      }
      return;
    }
  }
}

}  // namespace

std::optional<std::string> msgpack_from_json(std::string_view json, std::string* error) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag>(json.data(), json.size());
  if (doc.HasParseError()) {
    *error = std::string("invalid JSON: ") + rapidjson::GetParseError_En(doc.GetParseError()) + " at offset " +
             std::to_string(doc.GetErrorOffset());
    return std::nullopt;
  }
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pack_json(pk, doc);
  return std::string(buf.data(), buf.size());
}

std::optional<std::string> event_body_from_json(std::string_view line, std::string* error) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag>(line.data(), line.size());
  if (doc.HasParseError()) {
    *error = std::string("invalid JSON: ") + rapidjson::GetParseError_En(doc.GetParseError()) + " at offset " +
             std::to_string(doc.GetErrorOffset());
    return std::nullopt;
  }
  if (!doc.IsObject() || !doc.HasMember("tag") || !doc["tag"].IsString() || !doc.HasMember("data")) {
    *error = "expected an object with \"tag\" (string) and \"data\"";
    return std::nullopt;
  }
  std::string body(doc["tag"].GetString(), doc["tag"].GetStringLength());
  body += "\n\n";
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pack_json(pk, doc["data"]);
  body.append(buf.data(), buf.size());
  return body;
}

}  // namespace salttap::tap
