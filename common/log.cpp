#include "common/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>

#include <fmt/chrono.h>

namespace salttap::log {
namespace {
std::atomic<Level> g_level{Level::info};
std::mutex g_mutex;
constexpr std::string_view kNames[] = {"DEBUG", "INFO", "WARN", "ERROR"};
}  // namespace

void set_level(Level level) { g_level = level; }
bool enabled(Level level) { return level >= g_level.load(std::memory_order_relaxed); }

void write(Level level, std::string_view message) {
  const auto now = std::chrono::system_clock::now();
  const std::string line =
      fmt::format("{:%Y-%m-%dT%H:%M:%S}Z salttap {} {}\n", std::chrono::floor<std::chrono::milliseconds>(now),
                  kNames[static_cast<int>(level)], message);
  std::lock_guard lock(g_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace salttap::log
