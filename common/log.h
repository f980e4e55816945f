#pragma once
// Logging to stderr: one line per message, with time and level.
// ERROR means data loss or operator action needed; WARN means recovered.

#include <fmt/core.h>

#include <string_view>

namespace salttap::log {

enum class Level { debug, info, warn, error };
void set_level(Level level);
bool enabled(Level level);
void write(Level level, std::string_view message);

template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::debug)) write(Level::debug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::info)) write(Level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::warn)) write(Level::warn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  write(Level::error, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace salttap::log
