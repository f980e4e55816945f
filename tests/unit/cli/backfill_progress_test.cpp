// What `salttap backfill` shows while it runs: the bar on a terminal, the
// log line elsewhere, and when each is written (on fake time).

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "cli/internal/backfill_progress.h"
#include "tests/support/fake_steady_time.h"

namespace salttap {
namespace {

TEST(BackfillProgress, Durations) {
  EXPECT_EQ(cli::format_duration(0), "0:00");
  EXPECT_EQ(cli::format_duration(7.4), "0:07");
  EXPECT_EQ(cli::format_duration(125), "2:05");
  EXPECT_EQ(cli::format_duration(3723), "1:02:03");
  EXPECT_EQ(cli::format_duration(-1), "?");
}

TEST(BackfillProgress, TheBarSaysWhereAndHowFast) {
  const cli::BackfillSnapshot s{
      .total = 6931, .scanned = 3120, .indexed = 2800, .skipped = 300, .bad = 20, .seconds = 2};
  EXPECT_EQ(cli::progress_bar(s, 120),
            "[##################----------------------]  45% 3120/6931 | 2800 indexed 300 skipped 20 bad | 1560/s "
            "ETA 0:02");
  // An 80-column terminal keeps a bar; narrower ones lose it.
  EXPECT_EQ(cli::progress_bar(s, 79),
            "[####------]  45% 3120/6931 | 2800 indexed 300 skipped 20 bad | 1560/s ETA 0:02");
  EXPECT_EQ(cli::progress_bar(s, 100).size(), 100u);
  EXPECT_EQ(cli::progress_bar(s, 60), "45% 3120/6931 | 2800 indexed 300 skipped 20 bad | 1560/s ETA 0:02");
  EXPECT_EQ(cli::progress_bar({.total = 1, .scanned = 1, .seconds = 1}, 80),
            "[" + std::string(26, '#') + "] 100% 1/1 | 0 indexed 0 skipped 0 bad | 1/s ETA 0:00");
  EXPECT_EQ(cli::progress_text(s), "3120 of 6931 jobs (45%): 2800 indexed, 300 skipped, 20 bad; 1560 jobs/s, ETA 0:02");
  // Before anything was read the time left is unknown; an empty cache is done.
  EXPECT_EQ(cli::progress_text({.total = 10}), "0 of 10 jobs (0%): 0 indexed, 0 skipped, 0 bad; 0 jobs/s, ETA ?");
  EXPECT_EQ(cli::progress_text({}), "0 of 0 jobs (100%): 0 indexed, 0 skipped, 0 bad; 0 jobs/s, ETA ?");
}

TEST(BackfillProgress, TheBarIsRedrawnAtMostEveryInterval) {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&buf, &size);
  salttap::testing::FakeSteadyTime time;
  cli::ProgressReporter reporter(/*terminal=*/true, out, time, std::chrono::milliseconds(200));
  const cli::BackfillSnapshot s{.total = 10, .scanned = 5, .indexed = 5, .seconds = 1};
  reporter.update(s);  // too soon
  std::fflush(out);
  EXPECT_EQ(size, 0u);
  time.advance(std::chrono::milliseconds(200));
  reporter.update(s);
  reporter.update(s);  // too soon again
  reporter.finish(s);
  std::fclose(out);
  const std::string text(buf, size);
  std::free(buf);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 2);
  EXPECT_TRUE(text.ends_with("\x1b[K\n")) << text;
}

}  // namespace
}  // namespace salttap
