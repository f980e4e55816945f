#include "common/json_escape.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>

#include <emmintrin.h>

#include <rapidjson/writer.h>

#include "common/text.h"

namespace salttap::json {
namespace {

// The escape letter of each byte, 0 for bytes copied as they are.
constexpr std::array<char, 256> kEscape = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[static_cast<std::size_t>(c)] = 'u';
  t['\b'] = 'b';
  t['\t'] = 't';
  t['\n'] = 'n';
  t['\f'] = 'f';
  t['\r'] = 'r';
  t['"'] = '"';
  t['\\'] = '\\';
  return t;
}();

constexpr std::uint64_t kOnes = 0x0101010101010101ull;
constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full;
constexpr std::uint64_t kHighs = 0x8080808080808080ull;
constexpr char kHex[] = "0123456789ABCDEF";

// Byte k of a loaded word is p[k]: the first byte to escape is the lowest bit.
static_assert(std::endian::native == std::endian::little);

std::uint64_t load8(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// The high bit of each byte of `w` equal to zero. Exact per byte: no carry
// crosses a byte (7-bit halves plus 0x7f never overflow).
std::uint64_t zero_bytes(std::uint64_t w) { return ~(((w & kLow7) + kLow7) | w) & kHighs; }

// The high bit of each of the 8 bytes of `w` that needs an escape: below
// 0x20, '"' or '\\'. Exact per byte, so the bits can be counted.
std::uint64_t escapes_in(std::uint64_t w) {
  const std::uint64_t below_space = ~((w & kLow7) + kOnes * (0x80 - 0x20)) & ~w & kHighs;
  return below_space | zero_bytes(w ^ (kOnes * '"')) | zero_bytes(w ^ (kOnes * '\\'));
}

// The escape of each byte as it is written: up to 6 bytes, padded to 8 so
// that it is stored in one go.
struct EscapeText {
  char text[8];
  std::uint8_t size;
};
constexpr std::array<EscapeText, 256> kEscapeText = [] {
  std::array<EscapeText, 256> t{};
  for (std::size_t c = 0; c < 256; ++c) {
    const char e = kEscape[c];
    if (e == 0) continue;
    t[c].text[0] = '\\';
    t[c].text[1] = e;
    t[c].size = 2;
    if (e == 'u') {
      t[c].text[2] = '0';
      t[c].text[3] = '0';
      t[c].text[4] = kHex[c >> 4];
      t[c].text[5] = kHex[c & 0xf];
      t[c].size = 6;
    }
  }
  return t;
}();

// Each step below writes at most 16 bytes (up to 7 kept bytes of a word, then
// an escape stored as 8); the room is checked for that before each step.
constexpr std::size_t kStepRoom = 16;
// A block of 16 bytes writes at most 16 escapes of 6 bytes, and its stores
// reach 16 bytes past the cursor.
constexpr std::size_t kBlockRoom = 16 * 6 + 16;

// The bit of each of the 16 bytes of `v` that needs an escape: below 0x20,
// '"' or '\\'.
unsigned escapes_in(__m128i v) {
  const __m128i control_max = _mm_set1_epi8(0x1f);
  const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(v, control_max), control_max);  // v <= 0x1f
  return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
      control, _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))))));
}

// How many bytes of `s` come before the first one that needs an escape (all
// of them: s.size()). ORs into `high` bytes of `s` that include every byte
// of that prefix, so that its high bits say whether any byte >= 0x80.
std::size_t clean_prefix(std::string_view s, std::uint64_t& high) {
  const char* p = s.data();
  const std::size_t n = s.size();
  std::size_t i = 0;
  int block_high = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    block_high |= _mm_movemask_epi8(v);
    if (const unsigned m = escapes_in(v); m != 0) {
      if (block_high != 0) high |= kHighs;
      return i + static_cast<std::size_t>(__builtin_ctz(m));
    }
  }
  if (block_high != 0) high |= kHighs;
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t w = load8(p + i);
    high |= w;
    if (const std::uint64_t m = escapes_in(w); m != 0) return i + static_cast<std::size_t>(__builtin_ctzll(m) / 8);
  }
  for (; i < n; ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    high |= c;  // its high bit is the one kHighs keeps in the lowest byte
    if (kEscape[c] != 0) return i;
  }
  return n;
}

// Appends "s" escaped; returns false when `s` has a byte >= 0x80 (the
// caller may have to check its UTF-8).
//
// Most strings (keys, names, tags) need no escape: they are found so by one
// scan and appended at once. The others are copied up to their first escape,
// then escaped in one pass: blocks of 16 bytes (SSE2, which every x86-64
// has) with nothing to escape are stored at once, the others run by run
// between their escapes; then words of 8 bytes alike. The string grows ahead
// of the cursor (no bounds check per byte) and is trimmed to what was
// written.
bool put_string(std::string& out, std::string_view s) {
  const char* p = s.data();
  const std::size_t n = s.size();
  const std::size_t old = out.size();
  std::uint64_t high = 0;
  std::size_t i = clean_prefix(s, high);
  if (i == n) {
    out.append(n + 2, '"');  // the quotes at both ends, then the bytes between them
    if (n != 0) std::memcpy(out.data() + old + 1, p, n);
    return (high & kHighs) == 0;
  }
  out.resize(old + n + 2 + 4 * kStepRoom);
  char* d = out.data() + old;
  char* limit = out.data() + out.size();
  const auto ensure_room = [&](std::size_t left, std::size_t need = kStepRoom) {
    if (static_cast<std::size_t>(limit - d) >= need) return;
    const auto at = static_cast<std::size_t>(d - out.data());
    out.resize(out.size() + std::max(out.size() - old, left + need + 4 * kStepRoom));
    d = out.data() + at;
    limit = out.data() + out.size();
  };
  const auto put_escape = [&](unsigned char c) {
    std::memcpy(d, kEscapeText[c].text, sizeof kEscapeText[c].text);
    d += kEscapeText[c].size;
  };
  *d++ = '"';
  std::memcpy(d, p, i);
  d += i;
  alignas(16) char block[32] = {};  // a block, then zeros: runs are copied from it 16 bytes at a time
  int block_high = 0;
  while (i + 16 <= n) {
    ensure_room(n - i, kBlockRoom);
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    block_high |= _mm_movemask_epi8(v);
    unsigned m = escapes_in(v);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), v);
    if (m == 0) {
      d += 16;
      i += 16;
      continue;
    }
    // Bytes before each escape are already in place (the store above, then
    // the rest of the block stored again after each escape).
    _mm_store_si128(reinterpret_cast<__m128i*>(block), v);
    std::size_t j = 0;
    do {
      const auto k = static_cast<std::size_t>(__builtin_ctz(m));
      d += k - j;
      put_escape(static_cast<unsigned char>(block[k]));
      j = k + 1;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + j)));
      m &= m - 1;
    } while (m != 0);
    d += 16 - j;
    i += 16;
  }
  if (block_high != 0) high |= kHighs;
  while (i + 8 <= n) {
    ensure_room(n - i);
    const std::uint64_t w = load8(p + i);
    high |= w;
    const std::uint64_t m = escapes_in(w);
    std::memcpy(d, &w, sizeof w);
    if (m == 0) {
      d += sizeof w;
      i += sizeof w;
      continue;
    }
    const auto k = static_cast<std::size_t>(__builtin_ctzll(m) / 8);
    d += k;
    put_escape(static_cast<unsigned char>(p[i + k]));
    i += k + 1;
  }
  for (; i < n; ++i) {
    ensure_room(n - i);
    const auto c = static_cast<unsigned char>(p[i]);
    high |= c;  // its high bit is the one kHighs keeps in the lowest byte
    if (kEscape[c] == 0)
      *d++ = static_cast<char>(c);
    else
      put_escape(c);
  }
  *d++ = '"';
  out.resize(static_cast<std::size_t>(d - out.data()));
  return (high & kHighs) == 0;
}

// A RapidJSON output stream into a buffer the caller sized.
struct CharsOut {
  using Ch = char;
  char* p;
  // RapidJSON's output-stream concept names these two.
  void Put(char c) { *p++ = c; }  // NOLINT(readability-identifier-naming)
  void Flush() {}                 // NOLINT(readability-identifier-naming)
};

}  // namespace

void append_string(std::string& out, std::string_view s) { put_string(out, s); }

void append_text(std::string& out, std::string_view s) {
  const std::size_t mark = out.size();
  if (put_string(out, s) || is_valid_utf8(s)) return;
  out.resize(mark);
  std::string fixed;
  fixed.reserve(s.size() + 8);
  append_utf8_replacing(fixed, s);
  put_string(out, fixed);
}

void append_double(std::string& out, double d) {
  // RapidJSON's own writer (its dtoa is internal to it), into a small buffer.
  char buf[32];  // at most 25 characters
  CharsOut os{buf};
  rapidjson::Writer<CharsOut> w(os);
  w.Double(d);
  out.append(buf, static_cast<std::size_t>(os.p - buf));
}

void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

}  // namespace salttap::json
