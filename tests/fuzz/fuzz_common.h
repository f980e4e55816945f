#pragma once
// Shared helpers of the libFuzzer targets in tests/fuzz.

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

// An invariant that must hold for every input: print what broke, then trap so
// libFuzzer (and the regression runner, as a crashed test) reports the input.
#define FUZZ_CHECK(cond)                                                                    \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond);    \
      std::fflush(stderr);                                                                  \
      __builtin_trap();                                                                     \
    }                                                                                       \
  } while (0)

namespace salttap::fuzz {

// Everything salttap prints as JSON must parse back as strict JSON (valid
// UTF-8, no NaN), whatever the bytes on the bus were.
inline bool is_strict_json(std::string_view text) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseValidateEncodingFlag>(text.data(), text.size());
  if (d.HasParseError()) {
    std::fprintf(stderr, "not strict JSON (%s at %zu): %.*s\n", rapidjson::GetParseError_En(d.GetParseError()),
                 d.GetErrorOffset(), static_cast<int>(text.size() > 2000 ? 2000 : text.size()), text.data());
    return false;
  }
  return true;
}

// Rendering must stay linear in the wire size. The worst legitimate case is
// about 15 bytes of JSON per input byte (a 3-byte fixext as a map key:
// {"__ext__":{"type":5,"b64":"AA=="}} escaped); 64 leaves room.
constexpr std::size_t kMaxJsonPerByte = 64;

inline bool is_linear_size(std::string_view json, std::size_t wire_bytes) {
  if (json.size() <= kMaxJsonPerByte * wire_bytes + 256) return true;
  std::fprintf(stderr, "%zu wire bytes rendered as %zu bytes of JSON: %.*s...\n", wire_bytes, json.size(),
               static_cast<int>(json.size() > 300 ? 300 : json.size()), json.data());
  return false;
}

}  // namespace salttap::fuzz
