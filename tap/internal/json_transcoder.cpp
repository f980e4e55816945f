#include "tap/internal/json_transcoder.h"

#include <cmath>
#include <cstring>

#include <msgpack.hpp>

#include "common/json_escape.h"
#include "common/text.h"
#include "tap/internal/msgpack_cursor.h"
#include "tap/internal/salt_ext.h"

namespace salttap::tap {
namespace {

void append(std::string& out, std::string_view s) { out.append(s.data(), s.size()); }

void append_number_or_null(std::string& out, double d) {
  if (std::isfinite(d))
    json::append_double(out, d);
  else
    append(out, "null");
}

void append_bytes(std::string& out, std::string_view bytes) {
  append(out, R"({"__bytes_b64__":")");
  append(out, base64_encode(bytes));
  append(out, "\"}");
}

// Salt's ext 78 payload is "%Y%m%dT%H:%M:%S.%f"; rendered as isoformat().
void append_datetime(std::string& out, std::string_view p) {
  if (p.size() >= 17 && p[8] == 'T') {
    std::string iso;
    iso.reserve(p.size() + 2);
    iso.append(p.substr(0, 4)).append("-").append(p.substr(4, 2)).append("-").append(p.substr(6, 2));
    iso.append(p.substr(8));
    json::append_text(out, iso);
  } else {
    json::append_text(out, p);
  }
}

void append_tree_value(std::string& out, const msgpack::object& o, std::size_t ext_depth);

void append_ext(std::string& out, std::int8_t type, std::string_view payload, std::size_t ext_depth) {
  if (type == kExtDatetime) return append_datetime(out, payload);
  if (type == kExtConstant && ext_depth < kMaxNestedExtDepth) {
    // A constant is rare: decoded with msgpack-c, exactly as event_to_json.cpp
    // does, then rendered from that tree.
    if (const auto inner = unpack_constant(payload)) {
      append(out, R"({"__salt_constant__":)");
      append_tree_value(out, inner->get(), ext_depth + 1);
      out.push_back('}');
      return;
    }  // not msgpack after all: the generic form
  }
  append(out, R"({"__ext__":{"type":)");
  json::append_int(out, type);
  append(out, R"(,"b64":")");
  append(out, base64_encode(payload));
  append(out, "\"}}");
}

// A bin key: its text when it is UTF-8, else its base64.
void append_bin_key(std::string& out, std::string_view s) {
  if (is_valid_utf8(s))
    json::append_text(out, s);
  else
    json::append_string(out, base64_encode(s));
}

// --- from a msgpack::object tree (the payload of an ext 79) ---

void append_tree_key(std::string& out, const msgpack::object& k) {
  switch (k.type) {
    case msgpack::type::STR:
      return json::append_text(out, std::string_view(k.via.str.ptr, k.via.str.size));
    case msgpack::type::BIN:
      return append_bin_key(out, std::string_view(k.via.bin.ptr, k.via.bin.size));
    case msgpack::type::NIL:
    case msgpack::type::BOOLEAN:
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER:
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      // A scalar's key is its JSON text, quoted (nothing in it needs escaping).
      out.push_back('"');
      append_tree_value(out, k, 0);
      out.push_back('"');
      return;
    case msgpack::type::ARRAY:
      return append(out, "\"<array key>\"");
    case msgpack::type::MAP:
      return append(out, "\"<map key>\"");
    case msgpack::type::EXT:
      return append(out, "\"<ext key>\"");
  }
  append(out, "\"<key>\"");
}

void append_tree_value(std::string& out, const msgpack::object& o, std::size_t ext_depth) {
  switch (o.type) {
    case msgpack::type::NIL:
      return append(out, "null");
    case msgpack::type::BOOLEAN:
      return append(out, o.via.boolean ? "true" : "false");
    case msgpack::type::POSITIVE_INTEGER:
      return json::append_uint(out, o.via.u64);
    case msgpack::type::NEGATIVE_INTEGER:
      return json::append_int(out, o.via.i64);
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return append_number_or_null(out, o.via.f64);
    case msgpack::type::STR:
      return json::append_text(out, std::string_view(o.via.str.ptr, o.via.str.size));
    case msgpack::type::BIN:
      return append_bytes(out, std::string_view(o.via.bin.ptr, o.via.bin.size));
    case msgpack::type::ARRAY:
      out.push_back('[');
      for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
        if (i > 0) out.push_back(',');
        append_tree_value(out, o.via.array.ptr[i], ext_depth);
      }
      out.push_back(']');
      return;
    case msgpack::type::MAP:
      out.push_back('{');
      for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
        if (i > 0) out.push_back(',');
        append_tree_key(out, o.via.map.ptr[i].key);
        out.push_back(':');
        append_tree_value(out, o.via.map.ptr[i].val, ext_depth);
      }
      out.push_back('}');
      return;
    case msgpack::type::EXT:
      return append_ext(out, o.via.ext.type(), std::string_view(o.via.ext.data(), o.via.ext.size), ext_depth);
  }
  append(out, "null");
}

// --- from msgpack bytes ---

// Walks the input the way TreeBuilder (msgpack_tree.cpp) does, check for
// check and byte for byte, so every status and stop offset is the same; it
// writes JSON where TreeBuilder would build objects.
class Transcoder : MsgpackCursor {
 public:
  Transcoder(std::string_view bytes, std::size_t offset, const DecodeLimits& limits, std::string& out)
      : MsgpackCursor(bytes, offset), limits_(limits), budget_(bytes.size() - offset), out_(out) {}

  TreeResult run() {
    const TreeStatus s = value(0);
    return {s, offset()};
  }

 private:
  enum class KeyKind { text, bin, scalar, array, map, ext };

  static KeyKind key_kind(unsigned char b) {
    if (b <= 0x7f || b >= 0xe0) return KeyKind::scalar;
    if (b <= 0x8f) return KeyKind::map;
    if (b <= 0x9f) return KeyKind::array;
    if (b <= 0xbf) return KeyKind::text;
    switch (b) {
      case 0xc4:
      case 0xc5:
      case 0xc6:
        return KeyKind::bin;
      case 0xc7:
      case 0xc8:
      case 0xc9:
      case 0xd4:
      case 0xd5:
      case 0xd6:
      case 0xd7:
      case 0xd8:
        return KeyKind::ext;
      case 0xd9:
      case 0xda:
      case 0xdb:
        return KeyKind::text;
      case 0xdc:
      case 0xdd:
        return KeyKind::array;
      case 0xde:
      case 0xdf:
        return KeyKind::map;
      default:
        return KeyKind::scalar;
    }
  }

  std::string_view take(std::size_t n) {
    const std::string_view s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

  TreeStatus text(std::size_t n) {
    if (!have(n)) return TreeStatus::truncated;
    last_blob_ = take(n);
    json::append_text(out_, last_blob_);
    return TreeStatus::ok;
  }

  TreeStatus bin(std::size_t n) {
    if (!have(n)) return TreeStatus::truncated;
    last_blob_ = take(n);
    append_bytes(out_, last_blob_);
    return TreeStatus::ok;
  }

  TreeStatus ext(std::size_t n) {
    if (!have(n + 1)) return TreeStatus::truncated;
    const auto type = static_cast<std::int8_t>(*p_++);
    append_ext(out_, type, take(n), 0);
    return TreeStatus::ok;
  }

  TreeStatus array(std::size_t n, std::uint32_t depth) {
    if (n > limits_.max_container_items || depth >= limits_.max_depth) return TreeStatus::over_limit;
    if (!have(n) || n > budget_) return TreeStatus::truncated;
    budget_ -= n;
    out_.push_back('[');
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0) out_.push_back(',');
      if (auto s = value(depth + 1); s != TreeStatus::ok) return s;
    }
    out_.push_back(']');
    return TreeStatus::ok;
  }

  TreeStatus map(std::size_t n, std::uint32_t depth) {
    if (n > limits_.max_container_items || depth >= limits_.max_depth) return TreeStatus::over_limit;
    if (!have(2 * n) || 2 * n > budget_) return TreeStatus::truncated;
    budget_ -= 2 * n;
    out_.push_back('{');
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0) out_.push_back(',');
      if (auto s = key(depth + 1); s != TreeStatus::ok) return s;
      out_.push_back(':');
      if (auto s = value(depth + 1); s != TreeStatus::ok) return s;
    }
    out_.push_back('}');
    return TreeStatus::ok;
  }

  // A map key: parsed (and checked) as a value, then rewritten as JSON keys
  // must be, like event_to_json.cpp's write_key.
  TreeStatus key(std::uint32_t depth) {
    if (!have(1)) return TreeStatus::truncated;
    const KeyKind kind = key_kind(*p_);
    const std::size_t mark = out_.size();
    if (const TreeStatus s = value(depth); s != TreeStatus::ok) return s;
    switch (kind) {
      case KeyKind::text:
        return TreeStatus::ok;  // a str is its own key
      case KeyKind::bin:
        out_.resize(mark);
        append_bin_key(out_, last_blob_);
        return TreeStatus::ok;
      case KeyKind::scalar:
        // nil, true, 12, -3, 1.5 (or null for NaN): the value's text, quoted.
        out_.insert(mark, 1, '"');
        out_.push_back('"');
        return TreeStatus::ok;
      case KeyKind::array:
        out_.resize(mark);
        append(out_, "\"<array key>\"");
        return TreeStatus::ok;
      case KeyKind::map:
        out_.resize(mark);
        append(out_, "\"<map key>\"");
        return TreeStatus::ok;
      case KeyKind::ext:
        out_.resize(mark);
        append(out_, "\"<ext key>\"");
        return TreeStatus::ok;
    }
    return TreeStatus::ok;
  }

  TreeStatus value(std::uint32_t depth) {
    if (!have(1)) return TreeStatus::truncated;
    const unsigned char b = *p_++;
    if (b <= 0x7f) return json::append_uint(out_, b), TreeStatus::ok;
    if (b >= 0xe0) return json::append_int(out_, static_cast<std::int8_t>(b)), TreeStatus::ok;
    if (b <= 0x8f) return map(b & 0x0f, depth);
    if (b <= 0x9f) return array(b & 0x0f, depth);
    if (b <= 0xbf) return text(b & 0x1f);

    if (!have_fixed_part(b)) return TreeStatus::truncated;
    switch (b) {
      case 0xc0:
        append(out_, "null");
        return TreeStatus::ok;
      case 0xc2:
        append(out_, "false");
        return TreeStatus::ok;
      case 0xc3:
        append(out_, "true");
        return TreeStatus::ok;
      case 0xc4:
        return bin(read_be<std::uint8_t>());
      case 0xc5:
        return bin(read_be<std::uint16_t>());
      case 0xc6:
        return bin(read_be<std::uint32_t>());
      case 0xc7:
        return ext(read_be<std::uint8_t>());
      case 0xc8:
        return ext(read_be<std::uint16_t>());
      case 0xc9:
        return ext(read_be<std::uint32_t>());
      case 0xca: {
        const auto bits = read_be<std::uint32_t>();
        float f;
        std::memcpy(&f, &bits, sizeof f);
        append_number_or_null(out_, f);
        return TreeStatus::ok;
      }
      case 0xcb: {
        const auto bits = read_be<std::uint64_t>();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        append_number_or_null(out_, d);
        return TreeStatus::ok;
      }
      case 0xcc:
        return json::append_uint(out_, read_be<std::uint8_t>()), TreeStatus::ok;
      case 0xcd:
        return json::append_uint(out_, read_be<std::uint16_t>()), TreeStatus::ok;
      case 0xce:
        return json::append_uint(out_, read_be<std::uint32_t>()), TreeStatus::ok;
      case 0xcf:
        return json::append_uint(out_, read_be<std::uint64_t>()), TreeStatus::ok;
      case 0xd0:
        return json::append_int(out_, static_cast<std::int8_t>(read_be<std::uint8_t>())), TreeStatus::ok;
      case 0xd1:
        return json::append_int(out_, static_cast<std::int16_t>(read_be<std::uint16_t>())), TreeStatus::ok;
      case 0xd2:
        return json::append_int(out_, static_cast<std::int32_t>(read_be<std::uint32_t>())), TreeStatus::ok;
      case 0xd3:
        return json::append_int(out_, static_cast<std::int64_t>(read_be<std::uint64_t>())), TreeStatus::ok;
      case 0xd4:
        return ext(1);
      case 0xd5:
        return ext(2);
      case 0xd6:
        return ext(4);
      case 0xd7:
        return ext(8);
      case 0xd8:
        return ext(16);
      case 0xd9:
        return text(read_be<std::uint8_t>());
      case 0xda:
        return text(read_be<std::uint16_t>());
      case 0xdb:
        return text(read_be<std::uint32_t>());
      case 0xdc:
        return array(read_be<std::uint16_t>(), depth);
      case 0xdd:
        return array(read_be<std::uint32_t>(), depth);
      case 0xde:
        return map(read_be<std::uint16_t>(), depth);
      case 0xdf:
        return map(read_be<std::uint32_t>(), depth);
      default:
        --p_;
        return TreeStatus::invalid;  // 0xc1, never used
    }
  }

  const DecodeLimits& limits_;
  std::size_t budget_;  // values the rest of the input can still hold
  std::string& out_;
  std::string_view last_blob_;  // the last str/bin read: a bin key's bytes
};

}  // namespace

void append_msgpack_tree_json(std::string& out, const msgpack::object& value) { append_tree_value(out, value, 0); }

TreeResult transcode_msgpack_json(std::string_view bytes, std::size_t offset, const DecodeLimits& limits,
                                  std::string& out) {
  if (offset > bytes.size()) return {TreeStatus::truncated, offset};
  const std::size_t mark = out.size();
  const TreeResult r = Transcoder(bytes, offset, limits, out).run();
  if (r.status != TreeStatus::ok) out.resize(mark);
  return r;
}

TreeResult transcode_event_json(std::string_view tag, std::string_view body, std::size_t offset,
                                const DecodeLimits& limits, std::string& out) {
  const std::size_t mark = out.size();
  out.append(R"({"tag":)");
  json::append_text(out, tag);
  out.append(R"(,"data":)");
  const TreeResult r = transcode_msgpack_json(body, offset, limits, out);
  if (r.status != TreeStatus::ok) {
    out.resize(mark);
    return r;
  }
  out.push_back('}');
  return r;
}

}  // namespace salttap::tap
