#include "tap/event_from_json.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <msgpack.hpp>

#include "common/text.h"

namespace salttap::tap {
namespace {

// JSON is parsed iteratively (no recursion on the input's nesting) and packed
// recursively up to this depth: far beyond what the decoder accepts
// (DecodeLimits::max_depth) or salttap prints, and a bounded stack.
constexpr std::size_t kMaxJsonDepth = 1024;

// msgpack-c's pack_double stores a double that holds an integer as an integer
// (1.0 -> 1, -0.0 -> 0; 2^64 even overflows a uint64_t): the JSON number was a
// float, and stays one.
void pack_float64(msgpack::sbuffer& out, double d) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof d);
  char bytes[9];
  bytes[0] = static_cast<char>(0xcb);
  for (int i = 8; i >= 1; --i, bits >>= 8) bytes[i] = static_cast<char>(bits & 0xff);
  out.write(bytes, sizeof bytes);
}

// The bytes of {"__bytes_b64__": "<base64>"}, if `v` is one: only standard
// base64 as salttap and Salt's state.event write it. Anything else stays the
// object it is, so a line is never read as other bytes than it says.
std::optional<std::string> bytes_of(const rapidjson::Value& v) {
  if (v.MemberCount() != 1 || !v.HasMember("__bytes_b64__") || !v["__bytes_b64__"].IsString()) return std::nullopt;
  const auto& s = v["__bytes_b64__"];
  const std::string_view text(s.GetString(), s.GetStringLength());
  std::string raw = base64_decode(text);
  if (base64_encode(raw) != text) return std::nullopt;
  return raw;
}

// False when `v` is nested deeper than kMaxJsonDepth (the output is then unusable).
bool pack_json(msgpack::sbuffer& out, const rapidjson::Value& v, std::size_t depth = 1) {
  if (depth > kMaxJsonDepth) return false;
  msgpack::packer<msgpack::sbuffer> pk(out);
  switch (v.GetType()) {
    case rapidjson::kNullType:
      pk.pack_nil();
      return true;
    case rapidjson::kFalseType:
      pk.pack_false();
      return true;
    case rapidjson::kTrueType:
      pk.pack_true();
      return true;
    case rapidjson::kStringType: {
      pk.pack_str(v.GetStringLength());
      pk.pack_str_body(v.GetString(), v.GetStringLength());
      return true;
    }
    case rapidjson::kNumberType:
      if (v.IsUint64())
        pk.pack_uint64(v.GetUint64());
      else if (v.IsInt64())
        pk.pack_int64(v.GetInt64());
      else
        pack_float64(out, v.GetDouble());
      return true;
    case rapidjson::kArrayType:
      pk.pack_array(v.Size());
      for (const auto& item : v.GetArray())
        if (!pack_json(out, item, depth + 1)) return false;
      return true;
    case rapidjson::kObjectType: {
      if (const auto raw = bytes_of(v)) {
        pk.pack_bin(static_cast<std::uint32_t>(raw->size()));
        pk.pack_bin_body(raw->data(), static_cast<std::uint32_t>(raw->size()));
        return true;
      }
      pk.pack_map(v.MemberCount());
      for (const auto& m : v.GetObject()) {
        pk.pack_str(m.name.GetStringLength());
        pk.pack_str_body(m.name.GetString(), m.name.GetStringLength());
        if (!pack_json(out, m.value, depth + 1)) return false;
      }
      return true;
    }
  }
  return true;
}

// A document whose numbers are converted by std::from_chars (correctly
// rounded): rapidjson 1.1.0's full-precision parser turns some zeros into
// garbage ("0e100" -> -2e146, "0.0000000000000000000000000" -> -1.4e-194,
// undefined behaviour in DiyFp::Normalize) and its normal one is off by
// a few ulps. Integers stay integers while they fit 64 bits, as in rapidjson.
class JsonDocument : public rapidjson::Document {
 public:
  std::string number_error;

  bool RawNumber(const char* text, rapidjson::SizeType length, bool) {
    const char* end = text + length;
    const bool integer = std::none_of(text, end, [](char c) { return std::strchr(".eENI", c) != nullptr; });
    if (integer && *text == '-') {
      std::int64_t i = 0;
      if (std::from_chars(text, end, i).ec == std::errc()) return Int64(i);
    } else if (integer) {
      std::uint64_t u = 0;
      if (std::from_chars(text, end, u).ec == std::errc()) return Uint64(u);
    }
    double d = 0;
    const auto [ptr, ec] = std::from_chars(text, end, d);
    if (ec == std::errc() && ptr == end) return Double(d);
    // rapidjson 1.1.0 takes "NaInfinity" and "NInf" for Infinity: not numbers.
    number_error = ec == std::errc::result_out_of_range ? "number out of the range of a double: " : "invalid number: ";
    number_error.append(text, std::min<std::size_t>(length, 40));
    return false;
  }
};

bool parse(JsonDocument& doc, std::string_view json, std::string* error) {
  rapidjson::ParseResult result;
  auto generate = [&](rapidjson::Document&) {
    rapidjson::MemoryStream bytes(json.data(), json.size());
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(bytes);
    rapidjson::Reader reader;
    result = reader.Parse<rapidjson::kParseNanAndInfFlag | rapidjson::kParseNumbersAsStringsFlag |
                          rapidjson::kParseIterativeFlag>(in, doc);
    return !result.IsError();
  };
  doc.Populate(generate);
  if (!result.IsError()) return true;
  if (!doc.number_error.empty()) {
    *error = "invalid JSON: " + doc.number_error + " at offset " + std::to_string(result.Offset());
  } else {
    *error = std::string("invalid JSON: ") + rapidjson::GetParseError_En(result.Code()) + " at offset " +
             std::to_string(result.Offset());
  }
  return false;
}

std::string too_deep() { return "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"; }

}  // namespace

std::optional<std::string> msgpack_from_json(std::string_view json, std::string* error) {
  JsonDocument doc;
  if (!parse(doc, json, error)) return std::nullopt;
  msgpack::sbuffer buf;
  if (!pack_json(buf, doc)) {
    *error = too_deep();
    return std::nullopt;
  }
  return std::string(buf.data(), buf.size());
}

std::optional<std::string> event_body_from_json(std::string_view line, std::string* error) {
  JsonDocument doc;
  if (!parse(doc, line, error)) return std::nullopt;
  if (!doc.IsObject() || !doc.HasMember("tag") || !doc["tag"].IsString() || !doc.HasMember("data")) {
    *error = R"(expected an object with "tag" (string) and "data")";
    return std::nullopt;
  }
  std::string body(doc["tag"].GetString(), doc["tag"].GetStringLength());
  // The decoder splits the body at its first "\n\n": a tag holding one, or
  // ending in "\n", would come back as another tag and data.
  if (body.find("\n\n") != std::string::npos || (!body.empty() && body.back() == '\n')) {
    *error = R"(a tag holding "\n\n" or ending in "\n" cannot be told from the data)";
    return std::nullopt;
  }
  body += "\n\n";
  msgpack::sbuffer buf;
  if (!pack_json(buf, doc["data"])) {
    *error = too_deep();
    return std::nullopt;
  }
  body.append(buf.data(), buf.size());
  return body;
}

}  // namespace salttap::tap
