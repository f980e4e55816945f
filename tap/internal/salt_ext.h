#pragma once
// The msgpack ext types Salt writes, which both JSON renderers (event_to_json.cpp
// from a tree, json_transcoder.cpp from the bytes) must render alike: 78 a
// datetime, 79 a constant with a msgpack value inside, constants nested at
// most kMaxNestedExtDepth deep.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string_view>

#include <msgpack.hpp>

namespace salttap::tap {

inline constexpr std::int8_t kExtDatetime = 78;
inline constexpr std::int8_t kExtConstant = 79;
inline constexpr std::size_t kMaxNestedExtDepth = 8;

// The value inside a constant's payload, decoded by msgpack-c under small
// limits (a constant is rare and small); nothing when it is not msgpack after all.
inline std::optional<msgpack::object_handle> unpack_constant(std::string_view payload) {
  try {
    return msgpack::unpack(payload.data(), payload.size(), nullptr, nullptr,
                           msgpack::unpack_limit(1024, 1024, payload.size(), payload.size(), payload.size(), 16));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace salttap::tap
