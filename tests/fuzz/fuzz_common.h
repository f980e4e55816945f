#pragma once
// Shared helpers of the libFuzzer targets in tests/fuzz.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "common/text.h"
#include "tests/support/temp_dir.h"

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

// Targets that create, truncate, rename and remove a dozen files per input
// spend ~15 ms of journal waits on a disk, ~1 ms on tmpfs. Durability is not
// what they fuzz, so /dev/shm when there is one.
inline std::filesystem::path fast_temp_base() {
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return std::filesystem::temp_directory_path();
}

// One folder per process, <base>/<prefix><pid>, removed at exit; a crashing
// input leaves its folder behind, so the folders of `prefix` whose process is
// gone are removed at start. A target keeps one as a function-local static.
class ProcessScratchDir : public testing::OwnedDir {
 public:
  explicit ProcessScratchDir(std::string_view prefix, const std::filesystem::path& base = fast_temp_base())
      : OwnedDir(claim(prefix, base)) {}

 private:
  static std::filesystem::path claim(std::string_view prefix, const std::filesystem::path& base) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(prefix, 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        std::filesystem::remove_all(e.path(), ec);
    }
    const auto dir = base / (std::string(prefix) + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir;
  }
};

// `dir` emptied (or made) for the next input: nothing of the last one stays.
inline void empty_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir);
}

// A file holding exactly these bytes (none: an empty file).
inline void write_input_file(const std::filesystem::path& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr);
  FUZZ_CHECK(size == 0 || std::fwrite(data, 1, size, f) == size);
  std::fclose(f);
}

// The input after its header bytes, cut into consecutive pieces of a copy the
// target may change (fix CRCs in place): each piece is what was asked for, or
// what is left.
class InputSlices {
 public:
  InputSlices(const std::uint8_t* data, std::size_t size, std::size_t header)
      : bytes_(data, data + size), offset_(std::min(header, size)) {}
  std::pair<std::uint8_t*, std::size_t> next(std::size_t want) {
    const std::size_t n = std::min(want, left());
    std::uint8_t* p = bytes_.data() + offset_;
    offset_ += n;
    return {p, n};
  }
  std::size_t left() const { return bytes_.size() - offset_; }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }  // the whole copy, header included

 private:
  std::vector<std::uint8_t> bytes_;
  std::size_t offset_;
};

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
