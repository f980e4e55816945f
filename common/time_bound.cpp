#include "common/time_bound.h"

#include <cctype>
#include <limits>

#include <fmt/format.h>

namespace salttap {
namespace {

std::optional<Micros> unit_micros(char unit) {
  switch (unit) {
    case 's':
      return kMicrosPerSecond;
    case 'm':
      return Micros{60} * kMicrosPerSecond;
    case 'h':
      return Micros{3600} * kMicrosPerSecond;
    case 'd':
      return Micros{86400} * kMicrosPerSecond;
    case 'w':
      return Micros{7} * 86400 * kMicrosPerSecond;
    default:
      return std::nullopt;
  }
}

// "1h30m" -> µs; nullopt unless the whole text is <number><unit> pairs.
std::optional<Micros> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  Micros total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    Micros n = 0;
    const std::size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (n > std::numeric_limits<Micros>::max() / 10 - 9) return std::nullopt;
      n = n * 10 + (text[i++] - '0');
    }
    if (i == start || i == text.size()) return std::nullopt;
    const auto unit = unit_micros(text[i++]);
    if (!unit || n > std::numeric_limits<Micros>::max() / *unit / 2) return std::nullopt;
    total += n * *unit;
    if (total > std::numeric_limits<Micros>::max() / 2) return std::nullopt;
  }
  return total;
}

// "YYYY-MM-DD[( |T)HH:MM[:SS[.f]]][Z|±HH:MM]" -> the full form parse_salt_stamp reads.
std::optional<Micros> parse_utc(std::string_view text) {
  std::string s(text);
  if (s.size() >= 11 && s[10] == ' ') s[10] = 'T';
  if (s.size() == 10) s += "T00:00:00";
  // Seconds left out: insert ":00" after HH:MM.
  if (s.size() >= 16 && s[10] == 'T' && (s.size() == 16 || s[16] != ':')) s.insert(16, ":00");
  return parse_salt_stamp(s);
}

}  // namespace

std::optional<Micros> parse_time_bound(std::string_view text, Micros now, std::string& error) {
  if (const auto d = parse_duration(text)) return now - *d;
  if (const auto t = parse_utc(text)) return *t;
  error = fmt::format(
      "'{}' is neither a duration before now (90s, 15m, 2h, 7d, 1w, 1h30m) nor a UTC date or time "
      "(2026-11-29, 2026-11-29T19:04, 2026-11-29T19:04:50Z, with +HH:MM for another zone)",
      text);
  return std::nullopt;
}

}  // namespace salttap
