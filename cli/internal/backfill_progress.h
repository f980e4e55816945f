#pragma once
// How `salttap backfill` shows where it is: on a terminal a progress bar
// redrawn in place (jobs scanned of the total, indexed, skipped, bad, the
// rate and the time left); otherwise a log line every `log_every`.
// Formatting is pure (tested); the reporter only decides when to write.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/steady_time.h"

namespace salttap::cli {

struct BackfillSnapshot {
  std::uint64_t total = 0;    // job directories in the cache
  std::uint64_t scanned = 0;  // read to an outcome
  std::uint64_t indexed = 0;  // their documents went to the spool
  std::uint64_t skipped = 0;  // outside the window, noise, nocache, filtered
  std::uint64_t bad = 0;      // incomplete, undecodable, unreadable
  double seconds = 0;         // since the start
};

// "1:02:03", "2:05", "0:07"; "?" when unknown.
std::string format_duration(double seconds);
// "[#######-------]  45% 3120/6931 | 2800 indexed 300 skipped 20 bad | 1540/s ETA 0:02",
// fitted into `width` columns (the bar shrinks first).
std::string progress_bar(const BackfillSnapshot& s, std::size_t width);
// "3120 of 6931 jobs (45%): 2800 indexed, 300 skipped, 20 bad; 1540 jobs/s, ETA 0:02"
std::string progress_text(const BackfillSnapshot& s);

class ProgressReporter {
 public:
  // `terminal`: draw the bar on `out`; otherwise log lines.
  ProgressReporter(bool terminal, std::FILE* out, SteadyTime& time = real_steady_time(),
                   std::chrono::milliseconds redraw = std::chrono::milliseconds(200),
                   std::chrono::milliseconds log_every = std::chrono::seconds(10));
  void update(const BackfillSnapshot& s);
  // The last state, and the line ended.
  void finish(const BackfillSnapshot& s);

 private:
  bool terminal_;
  std::FILE* out_;
  SteadyTime& time_;
  std::chrono::milliseconds every_;
  SteadyTime::time_point last_;
  bool drawn_ = false;
};

// Whether stderr is a terminal.
bool stderr_is_terminal();

}  // namespace salttap::cli
