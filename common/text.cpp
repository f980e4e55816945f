#include "common/text.h"

#include <fnmatch.h>

#include <boost/beast/core/detail/base64.hpp>

namespace salttap {

std::string base64_encode(std::string_view bytes) {
  namespace b64 = boost::beast::detail::base64;
  std::string out(b64::encoded_size(bytes.size()), '\0');
  out.resize(b64::encode(out.data(), bytes.data(), bytes.size()));
  return out;
}

std::string base64_decode(std::string_view text) {
  namespace b64 = boost::beast::detail::base64;
  // Room for a last group without padding too: beast's decoded_size() is
  // exact only for a multiple of 4 characters, and decode() writes up to
  // 2 bytes past it for unpadded text.
  std::string out((text.size() + 3) / 4 * 3, '\0');
  out.resize(b64::decode(out.data(), text.data(), text.size()).first);
  return out;
}

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if it is invalid.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto c = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char b = c(0);
  if (b < 0x80) return 1;
  const std::size_t left = s.size() - i;
  const auto cont = [&](std::size_t k) { return k < left && (c(k) & 0xc0) == 0x80; };
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    if (!cont(1) || !cont(2)) return 0;
    if (b == 0xe0 && c(1) < 0xa0) return 0;   // overlong
    if (b == 0xed && c(1) >= 0xa0) return 0;  // surrogate
    return 3;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (b == 0xf0 && c(1) < 0x90) return 0;   // overlong
    if (b == 0xf4 && c(1) >= 0x90) return 0;  // > U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void append_utf8_replacing(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
}

// `*` and `?` alone (the event filters' and function lists' globs): matched
// here, with fnmatch's meaning (flags 0: `*` and `?` match `/` too), one
// backtrack point, no allocation. Runs for every event against every glob.
bool star_glob_match(std::string_view p, std::string_view t) {
  std::size_t pi = 0;
  std::size_t ti = 0;
  std::size_t star = std::string_view::npos;
  std::size_t mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool glob_match(std::string_view pattern, std::string_view text) {
  if (pattern.find_first_of("[\\") == std::string_view::npos && text.find('\0') == std::string_view::npos)
    return star_glob_match(pattern, text);
  // Bracket expressions and escapes: fnmatch, which needs NUL-terminated strings.
  return ::fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) == 0;
}

}  // namespace salttap
