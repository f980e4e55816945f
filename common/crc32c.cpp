#include "common/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace salttap {
namespace {

// The reflected polynomial 0x1EDC6F41.
constexpr std::uint32_t kPoly = 0x82F63B78;

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<std::uint32_t, 256> kTable = make_table();

std::uint32_t extend_table(std::uint32_t state, const unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) state = kTable[(state ^ p[i]) & 0xff] ^ (state >> 8);
  return state;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t extend_sse42(std::uint32_t state, const unsigned char* p,
                                                             std::size_t n) {
  std::uint64_t s = state;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    s = _mm_crc32_u64(s, word);
  }
  auto s32 = static_cast<std::uint32_t>(s);
  for (; n > 0; --n, ++p) s32 = _mm_crc32_u8(s32, *p);
  return s32;
}

const bool kHardware = __builtin_cpu_supports("sse4.2");
#else
constexpr bool kHardware = false;
#endif

}  // namespace

std::uint32_t crc32c_extend(std::uint32_t state, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
  if (kHardware) return extend_sse42(state, p, n);
#endif
  return extend_table(state, p, n);
}

std::uint32_t crc32c_extend_portable(std::uint32_t state, const void* data, std::size_t n) {
  return extend_table(state, static_cast<const unsigned char*>(data), n);
}

bool crc32c_hardware() { return kHardware; }

}  // namespace salttap
