#pragma once
// Hand-built msgpack frames for decoder tests (the Salt variants of
// docs/salt-event-bus.md §4 that the captures do not contain).

#include <string>
#include <string_view>

#include <msgpack.hpp>

namespace salttap::testing {

using Packer = msgpack::packer<msgpack::sbuffer>;

inline std::string str(const msgpack::sbuffer& b) { return std::string(b.data(), b.size()); }

// tag "\n\n" + msgpack of a map built by `fill(packer)` with `entries` entries.
template <typename Fill>
std::string body(std::string_view tag, std::uint32_t entries, Fill fill) {
  msgpack::sbuffer b;
  b.write(tag.data(), tag.size());
  b.write("\n\n", 2);
  Packer pk(b);
  pk.pack_map(entries);
  fill(pk);
  return str(b);
}

inline std::string simple_body(std::string_view tag, std::string_view value = "v") {
  return body(tag, 1, [&](Packer& pk) {
    pk.pack(std::string_view("k"));
    pk.pack(value);
  });
}

enum class BodyType { bin, raw };

// {"head": {}, "body": body}, or body first (Python 2 key order).
inline std::string frame(std::string_view body_bytes, BodyType type = BodyType::bin, bool body_first = false) {
  msgpack::sbuffer b;
  Packer pk(b);
  pk.pack_map(2);
  auto head = [&] {
    pk.pack(std::string_view("head"));
    pk.pack_map(0);
  };
  auto bodyf = [&] {
    pk.pack(std::string_view("body"));
    if (type == BodyType::bin) {
      pk.pack_bin(static_cast<std::uint32_t>(body_bytes.size()));
      pk.pack_bin_body(body_bytes.data(), static_cast<std::uint32_t>(body_bytes.size()));
    } else {
      pk.pack_str(static_cast<std::uint32_t>(body_bytes.size()));
      pk.pack_str_body(body_bytes.data(), static_cast<std::uint32_t>(body_bytes.size()));
    }
  };
  if (body_first) {
    bodyf();
    head();
  } else {
    head();
    bodyf();
  }
  return str(b);
}

inline std::string len32(std::string_view frame_bytes) {
  const auto n = static_cast<std::uint32_t>(frame_bytes.size());
  std::string out{static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                  static_cast<char>(n)};
  out.append(frame_bytes);
  return out;
}

}  // namespace salttap::testing
