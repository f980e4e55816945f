// Index names: "<prefix>-<kind>-YYYY.MM.DD" by the UTC day of the time given,
// or "<prefix>-<kind>" without dates.
#include "indexer/index_layout.h"

#include <gtest/gtest.h>

#include <ctime>
#include <random>

#include <fmt/format.h>

namespace salttap::indexer {
namespace {

constexpr Micros kDay = 86'400 * kMicrosPerSecond;

// What the name's date must be: gmtime_r's day, as the engine's date math sees it.
std::string gmtime_date(Micros t) {
  auto secs = static_cast<std::time_t>(t / kMicrosPerSecond);
  if (t < 0 && t % kMicrosPerSecond) --secs;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}.{:02}.{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

TEST(IndexLayout, NamesTheUtcDayOfTheTime) {
  const IndexLayout dated{"salt", true};
  const Micros t = *parse_salt_stamp("2026-12-03T23:59:59.999999");
  EXPECT_EQ(dated.index_name("returns", t), "salt-returns-2026.12.03");
  EXPECT_EQ(dated.index_name("returns", t + 1), "salt-returns-2026.12.04");
  EXPECT_EQ(dated.index_name("jobs", 0), "salt-jobs-1970.01.01");
  EXPECT_EQ(dated.index_name("jobs", -1), "salt-jobs-1969.12.31");
  EXPECT_EQ(IndexLayout({"salt", false}).index_name("events", t), "salt-events");
}

TEST(IndexLayout, AgreesWithGmtimeOverFourCenturies) {
  const IndexLayout dated{"p", true};
  std::mt19937_64 rng(20261203);
  std::uniform_int_distribution<Micros> any(-80LL * 365 * kDay, 8000LL * 365 * kDay / 20);
  for (int i = 0; i < 20000; ++i) {
    const Micros t = any(rng);
    ASSERT_EQ(dated.index_name("k", t), "p-k-" + gmtime_date(t)) << t;
  }
  // Leap days and the days around them.
  for (const char* day : {"2000-02-29", "2024-02-29", "2100-03-01", "1900-03-01"}) {
    const Micros t = *parse_salt_stamp(std::string(day) + "T12:00:00");
    for (const Micros d : {-kDay, Micros{0}, kDay})
      EXPECT_EQ(dated.index_name("k", t + d), "p-k-" + gmtime_date(t + d));
  }
}

}  // namespace
}  // namespace salttap::indexer
