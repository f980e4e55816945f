#include "tap/event.h"

namespace salttap::tap {

std::optional<std::string_view> as_string(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::STR:
      return std::string_view(o.via.str.ptr, o.via.str.size);
    case msgpack::type::BIN:
      return std::string_view(o.via.bin.ptr, o.via.bin.size);
    default:
      return std::nullopt;
  }
}

std::string joined_strings(const msgpack::object* o, char separator) {
  if (!o) return {};
  if (auto s = as_string(*o)) return std::string(*s);
  std::string out;
  if (o->type == msgpack::type::ARRAY) {
    for (std::uint32_t i = 0; i < o->via.array.size; ++i) {
      if (auto s = as_string(o->via.array.ptr[i])) {
        if (!out.empty()) out += separator;
        out += *s;
      }
    }
  }
  return out;
}

const msgpack::object* map_find(const msgpack::object& map, std::string_view key) {
  if (map.type != msgpack::type::MAP) return nullptr;
  const msgpack::object_kv* kv = map.via.map.ptr;
  for (std::uint32_t i = 0; i < map.via.map.size; ++i) {
    if (auto k = as_string(kv[i].key); k && *k == key) return &kv[i].val;
  }
  return nullptr;
}

const msgpack::object* Event::find(std::string_view key) const { return map_find(data_, key); }

std::optional<std::string_view> Event::string_field(std::string_view key) const {
  const msgpack::object* o = find(key);
  return o ? as_string(*o) : std::nullopt;
}

}  // namespace salttap::tap
