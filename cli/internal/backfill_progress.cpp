#include "cli/internal/backfill_progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/log.h"
#include "common/text_table.h"

namespace salttap::cli {
namespace {

// The bar fills stderr's terminal; one too narrow for it gets the usual 80.
std::size_t progress_width() {
  const std::size_t width = terminal_width(stderr);
  return width >= 20 ? width : 80;
}

double rate(const BackfillSnapshot& s) { return s.seconds > 0 ? static_cast<double>(s.scanned) / s.seconds : 0; }

double eta_seconds(const BackfillSnapshot& s) {
  const double r = rate(s);
  if (r <= 0 || s.scanned == 0) return -1;
  return static_cast<double>(s.total > s.scanned ? s.total - s.scanned : 0) / r;
}

unsigned percent(const BackfillSnapshot& s) {
  if (s.total == 0) return 100;
  return static_cast<unsigned>(std::min<std::uint64_t>(100, s.scanned * 100 / s.total));
}

}  // namespace

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || std::isinf(seconds)) return "?";
  const auto total = static_cast<std::uint64_t>(std::llround(seconds));
  const std::uint64_t h = total / 3600, m = total / 60 % 60, sec = total % 60;
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, sec);
  return fmt::format("{}:{:02}", m, sec);
}

std::string progress_bar(const BackfillSnapshot& s, std::size_t width) {
  // "[####----] " then the figures, the percentage right-aligned in 4 columns.
  const std::string figures =
      fmt::format("{:>4} {}/{} | {} indexed {} skipped {} bad | {:.0f}/s ETA {}", fmt::format("{}%", percent(s)),
                  s.scanned, s.total, s.indexed, s.skipped, s.bad, rate(s), format_duration(eta_seconds(s)));
  constexpr std::size_t kMinBar = 8, kMaxBar = 40;  // an 80-column terminal has room for a bar
  if (width < figures.size() + kMinBar + 3) return figures.substr(figures.find_first_not_of(' '));
  const std::size_t bar = std::min(kMaxBar, width - figures.size() - 3);
  const std::size_t full = bar * percent(s) / 100;
  return "[" + std::string(full, '#') + std::string(bar - full, '-') + "] " + figures;
}

std::string progress_text(const BackfillSnapshot& s) {
  return fmt::format("{} of {} jobs ({}%): {} indexed, {} skipped, {} bad; {:.0f} jobs/s, ETA {}", s.scanned, s.total,
                     percent(s), s.indexed, s.skipped, s.bad, rate(s), format_duration(eta_seconds(s)));
}

ProgressReporter::ProgressReporter(bool terminal, std::FILE* out, SteadyTime& time, std::chrono::milliseconds redraw,
                                   std::chrono::milliseconds log_every)
    : terminal_(terminal), out_(out), time_(time), every_(terminal ? redraw : log_every), last_(time.now()) {}

void ProgressReporter::update(const BackfillSnapshot& s) {
  const auto now = time_.now();
  if (now - last_ < every_) return;
  last_ = now;
  if (terminal_) {
    const std::string line = progress_bar(s, progress_width() - 1);
    std::fprintf(out_, "\r%s\x1b[K", line.c_str());  // erase what a longer line left
    std::fflush(out_);
    drawn_ = true;
  } else {
    log::info("backfill: {}", progress_text(s));
  }
}

void ProgressReporter::finish(const BackfillSnapshot& s) {
  if (terminal_) {
    std::fprintf(out_, "\r%s\x1b[K\n", progress_bar(s, progress_width() - 1).c_str());
    std::fflush(out_);
  } else if (drawn_ || s.scanned > 0) {
    log::info("backfill: {}", progress_text(s));
  }
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace salttap::cli
