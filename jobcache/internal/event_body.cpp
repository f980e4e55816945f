#include <algorithm>

#include "jobcache/internal/event_body.h"

namespace salttap::jobcache {

void EventBody::add_all(const msgpack::object& map, std::initializer_list<std::string_view> except) {
  if (map.type != msgpack::type::MAP) return;
  for (std::uint32_t i = 0; i < map.via.map.size; ++i) {
    const msgpack::object_kv& kv = map.via.map.ptr[i];
    const auto key = tap::as_string(kv.key);
    if (!key) continue;  // Salt's maps of events have string keys
    if (std::find(except.begin(), except.end(), *key) != except.end()) continue;
    add(*key, kv.val);
  }
}

std::optional<tap::Event> EventBody::build(std::string_view tag, tap::BodyDecoder& decoder) const {
  msgpack::sbuffer buffer;
  buffer.write(tag.data(), tag.size());
  buffer.write("\n\n", 2);
  msgpack::packer<msgpack::sbuffer> pk(buffer);
  pk.pack_map(static_cast<std::uint32_t>(fields_.size()));
  for (const Field& f : fields_) {
    pk.pack_str(static_cast<std::uint32_t>(f.key.size()));
    pk.pack_str_body(f.key.data(), static_cast<std::uint32_t>(f.key.size()));
    if (f.is_text) {
      pk.pack_str(static_cast<std::uint32_t>(f.text.size()));
      pk.pack_str_body(f.text.data(), static_cast<std::uint32_t>(f.text.size()));
    } else {
      pk.pack(f.value);
    }
  }
  return decoder.decode_body(std::string_view(buffer.data(), buffer.size()));
}

}  // namespace salttap::jobcache
