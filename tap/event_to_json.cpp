#include "tap/event_to_json.h"

#include <cmath>
#include <cstring>

#include "common/json_writer.h"

#include "common/text.h"
#include "tap/internal/json_transcoder.h"
#include "tap/internal/salt_ext.h"

namespace salttap::tap {
namespace {

using json::StringOut;
using CompactWriter = json::Writer;
using json::PrettyWriter;

template <typename Writer>
void write_text(Writer& w, std::string_view s) {
  if (is_valid_utf8(s)) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return;
  }
  std::string fixed;
  fixed.reserve(s.size() + 8);
  append_utf8_replacing(fixed, s);
  w.String(fixed.data(), static_cast<rapidjson::SizeType>(fixed.size()));
}

template <typename Writer>
void write_value(Writer& w, const msgpack::object& o, std::size_t ext_depth);

// Salt's ext 78 payload is "%Y%m%dT%H:%M:%S.%f"; render it as isoformat().
template <typename Writer>
void write_datetime(Writer& w, std::string_view p) {
  if (p.size() >= 17 && p[8] == 'T') {
    std::string iso;
    iso.reserve(p.size() + 2);
    iso.append(p.substr(0, 4)).append("-").append(p.substr(4, 2)).append("-").append(p.substr(6, 2));
    iso.append(p.substr(8));
    write_text(w, iso);
  } else {
    write_text(w, p);
  }
}

template <typename Writer>
void write_ext(Writer& w, const msgpack::object& o, std::size_t ext_depth) {
  const std::string_view payload(o.via.ext.data(), o.via.ext.size);
  const std::int8_t type = o.via.ext.type();
  if (type == kExtDatetime) return write_datetime(w, payload);
  if (type == kExtConstant && ext_depth < kMaxNestedExtDepth) {
    if (const auto inner = unpack_constant(payload)) {
      w.StartObject();
      w.Key("__salt_constant__");
      write_value(w, inner->get(), ext_depth + 1);
      w.EndObject();
      return;
    }  // not msgpack after all: the generic form
  }
  w.StartObject();
  w.Key("__ext__");
  w.StartObject();
  w.Key("type");
  w.Int(type);
  w.Key("b64");
  const std::string b64 = base64_encode(payload);
  w.String(b64.data(), static_cast<rapidjson::SizeType>(b64.size()));
  w.EndObject();
  w.EndObject();
}

// Map keys must be strings in JSON; render others the way Python's json does.
template <typename Writer>
void write_key(Writer& w, const msgpack::object& k) {
  switch (k.type) {
    case msgpack::type::STR:
    case msgpack::type::BIN: {
      const std::string_view s = *as_string(k);
      if (k.type == msgpack::type::BIN && !is_valid_utf8(s)) {
        const std::string b64 = base64_encode(s);
        w.Key(b64.data(), static_cast<rapidjson::SizeType>(b64.size()));
      } else {
        write_text(w, s);
      }
      return;
    }
    case msgpack::type::NIL:
      w.Key("null");
      return;
    case msgpack::type::BOOLEAN:
      w.Key(k.via.boolean ? "true" : "false");
      return;
    case msgpack::type::POSITIVE_INTEGER: {
      const std::string s = std::to_string(k.via.u64);
      w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
      return;
    }
    case msgpack::type::NEGATIVE_INTEGER: {
      const std::string s = std::to_string(k.via.i64);
      w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
      return;
    }
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: {
      std::string s;
      append_msgpack_json(s, k);
      w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
      return;
    }
    // Python cannot even build these (dicts and lists are unhashable), so no
    // Salt sends them; a fixed text keeps hostile nesting from growing the
    // output exponentially through repeated escaping.
    case msgpack::type::ARRAY:
      w.Key("<array key>");
      return;
    case msgpack::type::MAP:
      w.Key("<map key>");
      return;
    case msgpack::type::EXT:
      w.Key("<ext key>");
      return;
  }
  w.Key("<key>");
}

template <typename Writer>
void write_value(Writer& w, const msgpack::object& o, std::size_t ext_depth) {
  switch (o.type) {
    case msgpack::type::NIL:
      w.Null();
      return;
    case msgpack::type::BOOLEAN:
      w.Bool(o.via.boolean);
      return;
    case msgpack::type::POSITIVE_INTEGER:
      w.Uint64(o.via.u64);
      return;
    case msgpack::type::NEGATIVE_INTEGER:
      w.Int64(o.via.i64);
      return;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      if (std::isfinite(o.via.f64))
        w.Double(o.via.f64);
      else
        w.Null();
      return;
    case msgpack::type::STR:
      write_text(w, std::string_view(o.via.str.ptr, o.via.str.size));
      return;
    case msgpack::type::BIN: {
      w.StartObject();
      w.Key("__bytes_b64__");
      const std::string b64 = base64_encode(std::string_view(o.via.bin.ptr, o.via.bin.size));
      w.String(b64.data(), static_cast<rapidjson::SizeType>(b64.size()));
      w.EndObject();
      return;
    }
    case msgpack::type::ARRAY:
      w.StartArray();
      for (std::uint32_t i = 0; i < o.via.array.size; ++i) write_value(w, o.via.array.ptr[i], ext_depth);
      w.EndArray();
      return;
    case msgpack::type::MAP:
      w.StartObject();
      for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
        write_key(w, o.via.map.ptr[i].key);
        write_value(w, o.via.map.ptr[i].val, ext_depth);
      }
      w.EndObject();
      return;
    case msgpack::type::EXT:
      write_ext(w, o, ext_depth);
      return;
  }
  w.Null();
}

}  // namespace

void append_msgpack_json(std::string& out, const msgpack::object& value) {
  // The documents' hot path: the same bytes as write_value through the
  // compact writer (append_event_json below), written without it.
  append_msgpack_tree_json(out, value);
}

void append_msgpack_json_pretty(std::string& out, const msgpack::object& value) {
  StringOut os{out};
  PrettyWriter w(os);
  w.SetIndent(' ', 4);
  write_value(w, value, 0);
}

void append_event_json(std::string& out, const Event& event) {
  StringOut os{out};
  CompactWriter w(os);
  w.StartObject();
  w.Key("tag");
  write_text(w, event.tag());
  w.Key("data");
  write_value(w, event.data(), 0);
  w.EndObject();
}

}  // namespace salttap::tap
