#pragma once
// EventBody: the data map of one event the job cache stands in for, packed
// as the master packs it and decoded by the tap's own EventDecoder (tag
// "\n\n" msgpack), so a cache-made event is an Event like any from the bus
// and every consumer reads it through the same code.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <msgpack.hpp>

#include "tap/body_decoder.h"
#include "tap/event.h"

namespace salttap::jobcache {

class EventBody {
 public:
  // `value` (and what it points to) must outlive build().
  void add(std::string_view key, const msgpack::object& value) { fields_.push_back({key, value, {}, false}); }
  void add_string(std::string_view key, std::string value) { fields_.push_back({key, {}, std::move(value), true}); }
  // Every field of `map` whose key is not in `except` (a map's own order).
  void add_all(const msgpack::object& map, std::initializer_list<std::string_view> except);

  // The Event; nullopt (and decoder.last_error()) when the tap's decoder
  // refuses it, e.g. over its limits.
  [[nodiscard]] std::optional<tap::Event> build(std::string_view tag, tap::BodyDecoder& decoder) const;

 private:
  struct Field {
    std::string_view key;
    msgpack::object value;
    std::string text;
    bool is_text;
  };
  std::vector<Field> fields_;
};

}  // namespace salttap::jobcache
