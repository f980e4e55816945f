#include "tap/msgpack_tree.h"

#include <cstring>

#include "tap/internal/msgpack_cursor.h"

namespace salttap::tap {
namespace {

class TreeBuilder : MsgpackCursor {
 public:
  TreeBuilder(msgpack::zone& zone, std::string_view bytes, std::size_t offset, const DecodeLimits& limits)
      : MsgpackCursor(bytes, offset), zone_(zone), limits_(limits), budget_(bytes.size() - offset) {}

  TreeResult run(msgpack::object& out) {
    const TreeStatus s = value(out, 0);
    return {s, offset()};
  }

 private:
  // str/bin: `n` bytes at p_, referenced in place.
  TreeStatus blob(msgpack::object& o, msgpack::type::object_type type, std::size_t n) {
    if (!have(n)) return TreeStatus::truncated;
    o.type = type;
    o.via.str.ptr = reinterpret_cast<const char*>(p_);  // str and bin share layout
    o.via.str.size = static_cast<std::uint32_t>(n);
    p_ += n;
    return TreeStatus::ok;
  }

  // ext: a type byte then `n` data bytes; msgpack-c points at the type byte.
  TreeStatus ext(msgpack::object& o, std::size_t n) {
    if (!have(n + 1)) return TreeStatus::truncated;
    o.type = msgpack::type::EXT;
    o.via.ext.ptr = reinterpret_cast<const char*>(p_);
    o.via.ext.size = static_cast<std::uint32_t>(n);
    p_ += n + 1;
    return TreeStatus::ok;
  }

  TreeStatus array(msgpack::object& o, std::size_t n, std::uint32_t depth) {
    if (n > limits_.max_container_items || depth >= limits_.max_depth) return TreeStatus::over_limit;
    // Every element is at least one byte, in this array and in all the open ones.
    if (!have(n) || n > budget_) return TreeStatus::truncated;
    budget_ -= n;
    o.type = msgpack::type::ARRAY;
    o.via.array.size = static_cast<std::uint32_t>(n);
    o.via.array.ptr = n ? static_cast<msgpack::object*>(
                              zone_.allocate_align(sizeof(msgpack::object) * n, MSGPACK_ZONE_ALIGNOF(msgpack::object)))
                        : nullptr;
    for (std::size_t i = 0; i < n; ++i)
      if (auto s = value(o.via.array.ptr[i], depth + 1); s != TreeStatus::ok) return s;
    return TreeStatus::ok;
  }

  TreeStatus map(msgpack::object& o, std::size_t n, std::uint32_t depth) {
    if (n > limits_.max_container_items || depth >= limits_.max_depth) return TreeStatus::over_limit;
    if (!have(2 * n) || 2 * n > budget_) return TreeStatus::truncated;
    budget_ -= 2 * n;
    o.type = msgpack::type::MAP;
    o.via.map.size = static_cast<std::uint32_t>(n);
    o.via.map.ptr = n ? static_cast<msgpack::object_kv*>(zone_.allocate_align(sizeof(msgpack::object_kv) * n,
                                                                              MSGPACK_ZONE_ALIGNOF(msgpack::object_kv)))
                      : nullptr;
    for (std::size_t i = 0; i < n; ++i) {
      if (auto s = value(o.via.map.ptr[i].key, depth + 1); s != TreeStatus::ok) return s;
      if (auto s = value(o.via.map.ptr[i].val, depth + 1); s != TreeStatus::ok) return s;
    }
    return TreeStatus::ok;
  }

  void integer(msgpack::object& o, std::int64_t v) {
    if (v >= 0) {
      o.type = msgpack::type::POSITIVE_INTEGER;
      o.via.u64 = static_cast<std::uint64_t>(v);
    } else {
      o.type = msgpack::type::NEGATIVE_INTEGER;
      o.via.i64 = v;
    }
  }
  void unsigned_integer(msgpack::object& o, std::uint64_t v) {
    o.type = msgpack::type::POSITIVE_INTEGER;
    o.via.u64 = v;
  }

  TreeStatus value(msgpack::object& o, std::uint32_t depth) {
    if (!have(1)) return TreeStatus::truncated;
    const unsigned char b = *p_++;
    if (b <= 0x7f) return unsigned_integer(o, b), TreeStatus::ok;
    if (b >= 0xe0) return integer(o, static_cast<std::int8_t>(b)), TreeStatus::ok;
    if (b <= 0x8f) return map(o, b & 0x0f, depth);
    if (b <= 0x9f) return array(o, b & 0x0f, depth);
    if (b <= 0xbf) return blob(o, msgpack::type::STR, b & 0x1f);

    if (!have_fixed_part(b)) return TreeStatus::truncated;
    switch (b) {
      case 0xc0:
        o.type = msgpack::type::NIL;
        return TreeStatus::ok;
      case 0xc2:
        o.type = msgpack::type::BOOLEAN;
        o.via.boolean = false;
        return TreeStatus::ok;
      case 0xc3:
        o.type = msgpack::type::BOOLEAN;
        o.via.boolean = true;
        return TreeStatus::ok;
      case 0xc4:
        return blob(o, msgpack::type::BIN, read_be<std::uint8_t>());
      case 0xc5:
        return blob(o, msgpack::type::BIN, read_be<std::uint16_t>());
      case 0xc6:
        return blob(o, msgpack::type::BIN, read_be<std::uint32_t>());
      case 0xc7:
        return ext(o, read_be<std::uint8_t>());
      case 0xc8:
        return ext(o, read_be<std::uint16_t>());
      case 0xc9:
        return ext(o, read_be<std::uint32_t>());
      case 0xca: {
        const auto bits = read_be<std::uint32_t>();
        float f;
        std::memcpy(&f, &bits, sizeof f);
        o.type = msgpack::type::FLOAT32;
        o.via.f64 = f;
        return TreeStatus::ok;
      }
      case 0xcb: {
        const auto bits = read_be<std::uint64_t>();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        o.type = msgpack::type::FLOAT64;
        o.via.f64 = d;
        return TreeStatus::ok;
      }
      case 0xcc:
        return unsigned_integer(o, read_be<std::uint8_t>()), TreeStatus::ok;
      case 0xcd:
        return unsigned_integer(o, read_be<std::uint16_t>()), TreeStatus::ok;
      case 0xce:
        return unsigned_integer(o, read_be<std::uint32_t>()), TreeStatus::ok;
      case 0xcf:
        return unsigned_integer(o, read_be<std::uint64_t>()), TreeStatus::ok;
      case 0xd0:
        return integer(o, static_cast<std::int8_t>(read_be<std::uint8_t>())), TreeStatus::ok;
      case 0xd1:
        return integer(o, static_cast<std::int16_t>(read_be<std::uint16_t>())), TreeStatus::ok;
      case 0xd2:
        return integer(o, static_cast<std::int32_t>(read_be<std::uint32_t>())), TreeStatus::ok;
      case 0xd3:
        return integer(o, static_cast<std::int64_t>(read_be<std::uint64_t>())), TreeStatus::ok;
      case 0xd4:
        return ext(o, 1);
      case 0xd5:
        return ext(o, 2);
      case 0xd6:
        return ext(o, 4);
      case 0xd7:
        return ext(o, 8);
      case 0xd8:
        return ext(o, 16);
      case 0xd9:
        return blob(o, msgpack::type::STR, read_be<std::uint8_t>());
      case 0xda:
        return blob(o, msgpack::type::STR, read_be<std::uint16_t>());
      case 0xdb:
        return blob(o, msgpack::type::STR, read_be<std::uint32_t>());
      case 0xdc:
        return array(o, read_be<std::uint16_t>(), depth);
      case 0xdd:
        return array(o, read_be<std::uint32_t>(), depth);
      case 0xde:
        return map(o, read_be<std::uint16_t>(), depth);
      case 0xdf:
        return map(o, read_be<std::uint32_t>(), depth);
      default:
        --p_;
        return TreeStatus::invalid;  // 0xc1, never used
    }
  }

  msgpack::zone& zone_;
  const DecodeLimits& limits_;
  std::size_t budget_;  // objects the rest of the input can still hold
};

}  // namespace

TreeResult build_tree(msgpack::zone& zone, std::string_view bytes, std::size_t offset, const DecodeLimits& limits,
                      msgpack::object& out) {
  if (offset > bytes.size()) return {TreeStatus::truncated, offset};
  return TreeBuilder(zone, bytes, offset, limits).run(out);
}

}  // namespace salttap::tap
