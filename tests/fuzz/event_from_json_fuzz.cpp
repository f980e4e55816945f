// libFuzzer target: JSON lines to events (tap/event_from_json.h), what
// `salttap replay` reads from a .jsonl capture.
//
// The input is one line, given to msgpack_from_json and event_body_from_json.
// The harness parses it too (same grammar, numbers converted by the C
// library's strtod/strtoll: a second opinion on every number) and walks the
// JSON and the msgpack the library built side by side: every value must come
// out as itself (same strings, integers as integers while they fit 64 bits,
// doubles bit-equal, maps in order), and {"__bytes_b64__": s} becomes bin
// exactly when s is base64 and then holds the bytes s encodes, nothing less:
// any other object stays a map, so nothing a line says is lost. The library
// may refuse valid JSON only for its nesting depth or a number out of the
// range of a double (1e-400, 2e308), and must refuse the "numbers" rapidjson
// takes but strtod does not ("NaInfinity").
//
// An event body is tag "\n\n" msgpack(data) with nothing after the data, and
// EventDecoder must split it back into the same tag and data (or refuse data
// nested beyond its limits); a tag the separator would cut is refused.
//
// Seeds: lines of the .jsonl captures and hand-made edge cases (make_corpus.py).

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/memorystream.h>
#include <msgpack.hpp>

#include "common/text.h"
#include "tap/event_from_json.h"
#include "tap/event_to_json.h"
#include "tap/internal/event_decoder.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using namespace salttap::tap;
using salttap::fuzz::is_strict_json;

// The library may refuse valid JSON for its depth only: Salt's data is
// nested, so no limit below this is acceptable.
constexpr std::size_t kMinDepthLimit = 256;

std::string_view view(const rapidjson::Value& s) { return {s.GetString(), s.GetStringLength()}; }

// The line as the harness reads it: numbers by strtod/strtoll/strtoull.
struct ExpectedDocument : rapidjson::Document {
  bool number_refused = false;  // out of range, or not a number at all

  bool RawNumber(const char* text, rapidjson::SizeType length, bool) {
    const std::string n(text, length);  // NUL-terminated for strto*
    char* end = nullptr;
    if (n.find_first_of(".eENI") == std::string::npos) {
      errno = 0;
      if (n[0] == '-') {
        const long long i = std::strtoll(n.c_str(), &end, 10);
        if (errno == 0) return Int64(i);
      } else {
        const unsigned long long u = std::strtoull(n.c_str(), &end, 10);
        if (errno == 0) return Uint64(u);
      }
    }
    errno = 0;
    const double d = std::strtod(n.c_str(), &end);
    if (end != n.c_str() + n.size()) number_refused = true;
    // ERANGE also flags a subnormal result, which is a value all the same.
    if (errno == ERANGE && (d == 0 || std::isinf(d))) number_refused = true;
    return Double(d);
  }

  void parse(std::string_view json) {
    auto generate = [&](rapidjson::Document&) {
      rapidjson::MemoryStream bytes(json.data(), json.size());
      rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(bytes);
      rapidjson::Reader reader;
      const auto result = reader.Parse<rapidjson::kParseNanAndInfFlag | rapidjson::kParseNumbersAsStringsFlag |
                                       rapidjson::kParseIterativeFlag>(in, *this);
      invalid = result.IsError();
      return !invalid;
    };
    Populate(generate);
  }
  bool invalid = true;
};

std::size_t depth_of(const rapidjson::Value& root) {
  std::size_t deepest = 0;
  std::vector<std::pair<const rapidjson::Value*, std::size_t>> todo{{&root, 1}};
  while (!todo.empty()) {
    const auto [v, depth] = todo.back();
    todo.pop_back();
    deepest = std::max(deepest, depth);
    if (v->IsArray())
      for (const auto& item : v->GetArray()) todo.emplace_back(&item, depth + 1);
    else if (v->IsObject())
      for (const auto& m : v->GetObject()) todo.emplace_back(&m.value, depth + 1);
  }
  return deepest;
}

bool is_bytes_object(const rapidjson::Value& v) {
  return v.IsObject() && v.MemberCount() == 1 && view(v.MemberBegin()->name) == "__bytes_b64__" &&
         v.MemberBegin()->value.IsString();
}

std::string_view as_view(const msgpack::object& o) { return {o.via.str.ptr, o.via.str.size}; }

// Reports the first place where the msgpack is not the JSON.
bool same_value(const rapidjson::Value& json_root, const msgpack::object& packed_root) {
  std::vector<std::pair<const rapidjson::Value*, const msgpack::object*>> todo{{&json_root, &packed_root}};
  const auto fail = [](const char* why) {
    std::fprintf(stderr, "msgpack differs from the JSON: %s\n", why);
    return false;
  };
  while (!todo.empty()) {
    const auto [j, o] = todo.back();
    todo.pop_back();
    switch (j->GetType()) {
      case rapidjson::kNullType:
        if (o->type != msgpack::type::NIL) return fail("null");
        break;
      case rapidjson::kFalseType:
      case rapidjson::kTrueType:
        if (o->type != msgpack::type::BOOLEAN || o->via.boolean != j->IsTrue()) return fail("boolean");
        break;
      case rapidjson::kStringType:
        if (o->type != msgpack::type::STR || as_view(*o) != view(*j)) return fail("string");
        break;
      case rapidjson::kNumberType:
        if (j->IsUint64()) {
          if (o->type != msgpack::type::POSITIVE_INTEGER || o->via.u64 != j->GetUint64()) return fail("uint64");
        } else if (j->IsInt64()) {
          if (o->type != msgpack::type::NEGATIVE_INTEGER || o->via.i64 != j->GetInt64()) return fail("int64");
        } else {
          const double d = j->GetDouble();
          if (o->type != msgpack::type::FLOAT64 || std::memcmp(&o->via.f64, &d, sizeof d) != 0) return fail("double");
        }
        break;
      case rapidjson::kArrayType:
        if (o->type != msgpack::type::ARRAY || o->via.array.size != j->Size()) return fail("array");
        for (std::uint32_t i = 0; i < o->via.array.size; ++i) todo.emplace_back(&(*j)[i], &o->via.array.ptr[i]);
        break;
      case rapidjson::kObjectType: {
        if (is_bytes_object(*j)) {
          const std::string_view b64 = view(j->MemberBegin()->value);
          const bool is_base64 = salttap::base64_encode(salttap::base64_decode(b64)) == b64;
          if (o->type == msgpack::type::BIN) {
            if (salttap::base64_encode(as_view(*o)) != b64) return fail("bin: not the bytes the base64 encodes");
            break;
          }
          if (is_base64) return fail("valid base64 did not become bin");
        }
        if (o->type != msgpack::type::MAP || o->via.map.size != j->MemberCount()) return fail("map");
        std::uint32_t i = 0;
        for (const auto& m : j->GetObject()) {
          const msgpack::object_kv& kv = o->via.map.ptr[i++];
          if (kv.key.type != msgpack::type::STR || as_view(kv.key) != view(m.name)) return fail("map key");
          todo.emplace_back(&m.value, &kv.val);
        }
        break;
      }
    }
  }
  return true;
}

// The msgpack must be exactly one value; returns it.
msgpack::object_handle unpack_whole(std::string_view bytes) {
  std::size_t offset = 0;
  msgpack::object_handle h = msgpack::unpack(bytes.data(), bytes.size(), offset);
  FUZZ_CHECK(offset == bytes.size());
  return h;
}

void check_msgpack_from_json(std::string_view input, const ExpectedDocument& doc) {
  std::string error;
  std::optional<std::string> packed;
  {
    const salttap::fuzz::HeapPeak heap;
    packed = msgpack_from_json(input, &error);
    FUZZ_CHECK(salttap::fuzz::is_linear_heap(heap.growth(), input.size(), "msgpack_from_json"));
  }
  if (!packed) {
    FUZZ_CHECK(!error.empty());
    FUZZ_CHECK(doc.invalid || doc.number_refused || depth_of(doc) > kMinDepthLimit);
    return;
  }
  FUZZ_CHECK(!doc.invalid && !doc.number_refused);
  const msgpack::object_handle h = unpack_whole(*packed);
  FUZZ_CHECK(same_value(doc, h.get()));
  std::string json;
  append_msgpack_json(json, h.get());
  FUZZ_CHECK(is_strict_json(json));
}

// The tag comes back from the body only if its first "\n\n" is the separator.
bool splits_back(std::string_view tag) { return (std::string(tag) + "\n\n").find("\n\n") == tag.size(); }

void check_event_body_from_json(std::string_view input, const ExpectedDocument& doc) {
  std::string error;
  const std::optional<std::string> body = event_body_from_json(input, &error);
  const bool shaped = !doc.invalid && doc.IsObject() && doc.FindMember("tag") != doc.MemberEnd() &&
                      doc.FindMember("tag")->value.IsString() && doc.FindMember("data") != doc.MemberEnd();
  if (!body) {
    FUZZ_CHECK(!error.empty());
    FUZZ_CHECK(!shaped || !splits_back(view(doc.FindMember("tag")->value)) || doc.number_refused ||
               depth_of(doc) > kMinDepthLimit);
    return;
  }
  FUZZ_CHECK(shaped && !doc.number_refused);
  const std::string_view tag = view(doc.FindMember("tag")->value);
  const rapidjson::Value& data = doc.FindMember("data")->value;
  FUZZ_CHECK(splits_back(tag));
  FUZZ_CHECK(std::string_view(*body).substr(0, tag.size()) == tag);
  FUZZ_CHECK(std::string_view(*body).substr(tag.size(), 2) == "\n\n");
  const msgpack::object_handle h = unpack_whole(std::string_view(*body).substr(tag.size() + 2));
  FUZZ_CHECK(same_value(data, h.get()));

  EventDecoder decoder;
  const std::optional<Event> event = decoder.decode_body(*body);
  if (!event) {
    FUZZ_CHECK(decoder.last_error().rfind("over_limit", 0) == 0);
    return;
  }
  FUZZ_CHECK(event->tag() == tag);
  FUZZ_CHECK(same_value(data, event->data()));
  std::string json;
  append_event_json(json, *event);
  FUZZ_CHECK(is_strict_json(json));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  ExpectedDocument doc;
  doc.parse(input);
  check_msgpack_from_json(input, doc);
  check_event_body_from_json(input, doc);
  return 0;
}
