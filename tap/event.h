#pragma once
// Event: one decoded message from the master's event bus, owning its memory.
//
// The frame bytes are copied once into the event's msgpack zone, and the data
// tree references them (zero-copy strings), so an Event is one allocation in
// the common case and stays valid after the socket buffer is reused.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <msgpack.hpp>

namespace salttap::tap {

class Event {
 public:
  Event() = default;
  Event(msgpack::zone&& zone, std::string_view tag, msgpack::object data, std::size_t wire_bytes)
      : zone_(std::move(zone)), tag_(tag), data_(data), wire_bytes_(wire_bytes) {}
  Event(Event&&) noexcept = default;
  Event& operator=(Event&&) noexcept = default;

  // Keeps `buffer` alive with the event (a large frame handed over without a
  // copy; the tree points into it). Moving a heap std::string keeps its bytes.
  void adopt(std::string&& buffer) { backing_ = std::move(buffer); }

  std::string_view tag() const { return tag_; }
  // Always a map for events fired by Salt; anything else is passed through.
  const msgpack::object& data() const { return data_; }
  std::size_t wire_bytes() const { return wire_bytes_; }

  // data[key] when data is a map with a string key `key`.
  const msgpack::object* find(std::string_view key) const;
  // data[key] when it is a string (str, or bin holding text).
  [[nodiscard]] std::optional<std::string_view> string_field(std::string_view key) const;

 private:
  msgpack::zone zone_{0};
  std::string backing_;
  std::string_view tag_;
  msgpack::object data_;
  std::size_t wire_bytes_ = 0;
};

// Lookup helpers shared by every consumer of msgpack maps from Salt.
const msgpack::object* map_find(const msgpack::object& map, std::string_view key);
[[nodiscard]] std::optional<std::string_view> as_string(const msgpack::object& o);
// A string, or the strings of a list joined by `separator` (a multi-function
// job's fun, a list target: commas; a state's comment lines: newlines); ""
// for anything else.
[[nodiscard]] std::string joined_strings(const msgpack::object* o, char separator = ',');

}  // namespace salttap::tap
