#include "common/clock.h"

#include <chrono>

#include <fmt/format.h>

namespace salttap {
namespace {

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

std::optional<Micros> to_micros(int y, int mo, int d, int h, int mi, int s, int us) {
  using namespace std::chrono;
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) return std::nullopt;
  const auto days = sys_days{ymd}.time_since_epoch().count();
  return ((static_cast<Micros>(days) * 24 + h) * 60 + mi) * 60 * kMicrosPerSecond +
         static_cast<Micros>(s) * kMicrosPerSecond + us;
}

}  // namespace

Micros SystemClock::now() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::optional<Micros> parse_salt_stamp(std::string_view s) {
  int y, mo, d, h, mi, sec;
  if (!digits(s, 0, 4, y) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d) || s[10] != 'T' || !digits(s, 11, 2, h) || s[13] != ':' || !digits(s, 14, 2, mi) ||
      s[16] != ':' || !digits(s, 17, 2, sec))
    return std::nullopt;
  int us = 0;
  std::size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    int scale = 100000;
    for (++pos; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos, scale /= 10)
      if (scale > 0) us += (s[pos] - '0') * scale;
  }
  Micros offset = 0;  // "+HH:MM" / "-HH:MM" / "Z"; naive means UTC
  if (pos < s.size()) {
    int oh, om;
    if (s[pos] == 'Z' && pos + 1 == s.size()) {
    } else if ((s[pos] == '+' || s[pos] == '-') && digits(s, pos + 1, 2, oh) && s.size() == pos + 6 &&
               s[pos + 3] == ':' && digits(s, pos + 4, 2, om)) {
      offset = (static_cast<Micros>(oh) * 60 + om) * 60 * kMicrosPerSecond * (s[pos] == '+' ? 1 : -1);
    } else {
      return std::nullopt;
    }
  }
  auto t = to_micros(y, mo, d, h, mi, sec, us);
  if (!t) return std::nullopt;
  return *t - offset;
}

std::optional<Micros> parse_jid_time(std::string_view jid) {
  if (jid.size() < 20 || (jid.size() > 20 && jid[20] != '_')) return std::nullopt;
  int y, mo, d, h, mi, s, us;
  if (!digits(jid, 0, 4, y) || !digits(jid, 4, 2, mo) || !digits(jid, 6, 2, d) || !digits(jid, 8, 2, h) ||
      !digits(jid, 10, 2, mi) || !digits(jid, 12, 2, s) || !digits(jid, 14, 6, us))
    return std::nullopt;
  return to_micros(y, mo, d, h, mi, s, us);
}

std::string format_utc(Micros t) {
  using namespace std::chrono;
  Micros secs = t / kMicrosPerSecond;
  Micros us = t % kMicrosPerSecond;
  if (us < 0) {
    us += kMicrosPerSecond;
    --secs;
  }
  const sys_days day{days{secs >= 0 ? secs / 86400 : (secs - 86399) / 86400}};
  const Micros in_day = secs - day.time_since_epoch().count() * 86400;
  const year_month_day ymd{day};
  const int year = static_cast<int>(ymd.year());
  if (year < 0 || year > 9999)
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", year, static_cast<unsigned>(ymd.month()),
                       static_cast<unsigned>(ymd.day()), in_day / 3600, in_day / 60 % 60, in_day % 60, us);
  // Every document carries one or more: digits by hand, not through a format string.
  char b[27] = {'0', '0', '0', '0', '-', '0', '0', '-', '0', '0', 'T', '0', '0', ':',
                '0', '0', ':', '0', '0', '.', '0', '0', '0', '0', '0', '0', 'Z'};
  const auto put = [&b](std::size_t end, long long v, int n) {
    for (int i = 0; i < n; ++i, v /= 10) b[end - static_cast<std::size_t>(i)] = static_cast<char>('0' + v % 10);
  };
  put(3, year, 4);
  put(6, static_cast<unsigned>(ymd.month()), 2);
  put(9, static_cast<unsigned>(ymd.day()), 2);
  put(12, in_day / 3600, 2);
  put(15, in_day / 60 % 60, 2);
  put(18, in_day % 60, 2);
  put(25, us, 6);
  std::string text(b, sizeof b);
  return text;
}

}  // namespace salttap
