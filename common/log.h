#pragma once
// Logging to stderr: one line per message, in one of three formats:
//   plain    2026-11-29T19:25:35Z salttap INFO run: ...   (a terminal, a file)
//   journal  <6>INFO run: ...       (stderr is systemd's journal stream: journald
//            stamps each line itself and reads its priority from the <N> prefix)
//   json     {"time":..., "level":..., "message":..., "fields":{...}}  (log shippers)
// The default picks journal when JOURNAL_STREAM names stderr, plain otherwise.
// ERROR means data loss or operator action needed; WARN means recovered.

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace salttap::log {

enum class Level { debug, info, warn, error };
void set_level(Level level);
bool enabled(Level level);
void write(Level level, std::string_view message);

enum class Format { plain, journal, json };
void set_format(Format format);
Format format();
// "plain", "journal", "json"; nullopt for anything else.
[[nodiscard]] std::optional<Format> parse_format(std::string_view name);
// journal when `journal_stream` (JOURNAL_STREAM's "<device>:<inode>") is the
// file `fd` is open on, plain otherwise.
Format detect_format(const char* journal_stream, int fd);
// One message as `format` writes it, with its newline.
std::string format_line(Format format, Level level, std::chrono::system_clock::time_point time,
                        std::string_view message);
// Where lines go: stderr unless a test says otherwise.
void set_output(std::FILE* out);

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
