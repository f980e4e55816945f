#pragma once
// Shared helpers of the libFuzzer targets in tests/fuzz.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "common/text.h"

// An invariant that must hold for every input: print what broke, then trap so
// libFuzzer (and the regression runner, as a crashed test) reports the input.
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
      std::fflush(stderr);                                                              \
      __builtin_trap();                                                                 \
    }                                                                                   \
  } while (0)

// Sanitizer allocator hooks, declared weak so the targets link without ASan
// (the regression runners of a plain build): no ASan, no heap measurement.
extern "C" {
__attribute__((weak)) int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*,
                                                                                        std::size_t),
                                                                    void (*free_hook)(const volatile void*));
__attribute__((weak)) std::size_t __sanitizer_get_allocated_size(const volatile void* p);
}

namespace salttap::fuzz {

// Peak heap growth over a scope (single-threaded targets), from ASan's hooks.
class HeapPeak {
 public:
  HeapPeak() {
    if (!available()) return;
    state().base = state().current;
    state().peak = state().current;
  }
  static bool available() {
    static const bool ok = __sanitizer_install_malloc_and_free_hooks != nullptr &&
                           __sanitizer_get_allocated_size != nullptr &&
                           __sanitizer_install_malloc_and_free_hooks(&on_malloc, &on_free) != 0;
    return ok;
  }
  // Bytes allocated at the peak beyond what was allocated at construction.
  std::size_t growth() const { return available() ? static_cast<std::size_t>(state().peak - state().base) : 0; }

 private:
  struct State {  // signed: blocks allocated before the hooks may be freed
    std::int64_t current = 0, peak = 0, base = 0;
  };
  static State& state() {
    static State s;
    return s;
  }
  static void on_malloc(const volatile void*, std::size_t size) {
    State& s = state();
    s.current += static_cast<std::int64_t>(size);
    if (s.current > s.peak) s.peak = s.current;
  }
  static void on_free(const volatile void* p) {
    State& s = state();
    s.current -= static_cast<std::int64_t>(__sanitizer_get_allocated_size(p));
  }
};

// Decoding N bytes may allocate the frame copy (2N + 512: zone_chunk_for)
// and a tree of at most one 24-byte msgpack::object per input byte for the
// frame and again for the body, with msgpack::zone rounding its chunks up;
// plus a constant: a fixmap/fixarray header reserves up to 15 entries (720
// bytes) before they are read, at each of max_depth (256) levels, per tree.
// Anything beyond is memory reserved for items the input cannot hold.
constexpr std::size_t kMaxDecodeHeapPerByte = 128;
constexpr std::size_t kMaxDecodeHeapSlack = 512u << 10;
inline bool is_linear_heap(std::size_t grown, std::size_t wire_bytes, const char* what) {
  if (grown <= kMaxDecodeHeapPerByte * wire_bytes + kMaxDecodeHeapSlack) return true;
  std::fprintf(stderr, "%s of %zu bytes allocated %zu bytes at its peak\n", what, wire_bytes, grown);
  return false;
}

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

// Text is valid UTF-8 when its bytes are and, if it is JSON, so is every
// string it decodes to: the escape of a lone surrogate (backslash u DC00) is
// valid bytes that decode to invalid UTF-8 (rapidjson 1.1.0 lets it through),
// which messages quoting the engine's strings then carry as they are.
inline bool decodes_to_utf8(std::string_view text) {
  if (!salttap::is_valid_utf8(text)) return false;
  rapidjson::Document d;
  d.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (d.HasParseError()) return true;
  std::vector<const rapidjson::Value*> todo{&d};
  const auto utf8 = [](const rapidjson::Value& s) {
    return salttap::is_valid_utf8(std::string_view(s.GetString(), s.GetStringLength()));
  };
  while (!todo.empty()) {
    const rapidjson::Value& v = *todo.back();
    todo.pop_back();
    if (v.IsString() && !utf8(v)) return false;
    if (v.IsArray())
      for (const auto& item : v.GetArray()) todo.push_back(&item);
    if (v.IsObject())
      for (const auto& m : v.GetObject()) {
        if (!utf8(m.name)) return false;
        todo.push_back(&m.value);
      }
  }
  return true;
}

// Rendering must stay linear in the wire size. The worst legitimate case is
// about 12 bytes of JSON per input byte (a 3-byte fixext value renders as
// {"__ext__":{"type":5,"b64":"AA=="}}); 64 leaves room. Regression:
// corpus/event_decoder/crash-json-nested-map-keys-exponential.
constexpr std::size_t kMaxJsonPerByte = 64;

inline bool is_linear_size(std::string_view json, std::size_t wire_bytes) {
  if (json.size() <= kMaxJsonPerByte * wire_bytes + 256) return true;
  std::fprintf(stderr, "%zu wire bytes rendered as %zu bytes of JSON: %.*s...\n", wire_bytes, json.size(),
               static_cast<int>(json.size() > 300 ? 300 : json.size()), json.data());
  return false;
}

}  // namespace salttap::fuzz
