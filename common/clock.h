#pragma once
// Time as microseconds since the Unix epoch (UTC), from an injected clock, so
// the correlator's deadlines run on fake time in tests and on the events' own
// `_stamp`s in replay.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace salttap {

using Micros = std::int64_t;
inline constexpr Micros kMicrosPerSecond = 1'000'000;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Micros now() const = 0;
};

class SystemClock final : public Clock {
 public:
  Micros now() const override;
};

// Moved by hand: tests, and replay (set from each event's _stamp).
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Micros start = 0) : now_(start) {}
  Micros now() const override { return now_.load(); }
  void set(Micros t) { now_.store(t); }
  void advance(Micros d) { now_.fetch_add(d); }

 private:
  std::atomic<Micros> now_;
};

// Salt's `_stamp`: "YYYY-MM-DDTHH:MM:SS[.ffffff][+00:00]" (naive stamps are UTC).
[[nodiscard]] std::optional<Micros> parse_salt_stamp(std::string_view stamp);
// A 20-digit jid "YYYYMMDDhhmmssffffff" (UTC since Salt 3000), optionally "_<pid>".
[[nodiscard]] std::optional<Micros> parse_jid_time(std::string_view jid);
// "2026-11-29T19:04:50.452295Z"
std::string format_utc(Micros t);

}  // namespace salttap
