#include "indexer/internal/document_json.h"

#include "common/text.h"

namespace salttap::indexer {

#ifndef SALTTAP_VERSION
#define SALTTAP_VERSION "dev"
#endif

void write_salttap_meta(json::Writer& w, std::string_view kind) {
  w.StartObject();
  json::key(w, "doc"), json::string(w, kind);
  json::key(w, "version"), json::string(w, SALTTAP_VERSION);
  w.EndObject();
}

void write_common(json::Writer& w, std::string_view kind, Micros timestamp, std::string_view master,
                  std::string_view fleet) {
  json::key(w, "@timestamp"), json::string(w, format_utc(timestamp));
  json::key(w, "master"), json::string(w, master);
  json::key(w, "fleet"), json::string(w, fleet);
  json::key(w, "salttap");
  write_salttap_meta(w, kind);
}

void utf8_string(json::Writer& w, std::string_view text) { w.Text(text); }

bool bounded_string(json::Writer& w, std::string_view text, std::size_t cap) {
  if (text.size() <= cap) {
    utf8_string(w, text);
    return false;
  }
  std::size_t n = cap;
  // Back off over continuation bytes to the start of the cut character.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  utf8_string(w, text.substr(0, n));
  return true;
}

std::size_t nesting_depth(const msgpack::object& o, std::size_t limit) {
  if (limit == 0) return (o.type == msgpack::type::MAP || o.type == msgpack::type::ARRAY) ? 1 : 0;
  std::size_t deepest = 0;
  if (o.type == msgpack::type::MAP) {
    for (std::uint32_t i = 0; i < o.via.map.size && deepest <= limit; ++i)
      deepest = std::max(deepest, nesting_depth(o.via.map.ptr[i].val, limit - 1));
    return deepest + 1;
  }
  if (o.type == msgpack::type::ARRAY) {
    for (std::uint32_t i = 0; i < o.via.array.size && deepest <= limit; ++i)
      deepest = std::max(deepest, nesting_depth(o.via.array.ptr[i], limit - 1));
    return deepest + 1;
  }
  return 0;
}

}  // namespace salttap::indexer
