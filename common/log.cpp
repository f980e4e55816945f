#include "common/log.h"

#include <sys/stat.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <mutex>

#include <fmt/chrono.h>

#include "common/json_writer.h"
#include "common/text.h"

namespace salttap::log {
namespace {
std::atomic<Level> g_level{Level::info};
std::atomic<Format> g_format{detect_format(std::getenv("JOURNAL_STREAM"), 2)};
std::atomic<std::FILE*> g_output{nullptr};  // nullptr: stderr
std::mutex g_mutex;
constexpr std::string_view kNames[] = {"DEBUG", "INFO", "WARN", "ERROR"};
constexpr std::string_view kJsonNames[] = {"debug", "info", "warning", "error"};
constexpr int kSyslogPriorities[] = {7, 6, 4, 3};  // LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERR

std::size_t index_of(Level level) { return static_cast<std::size_t>(level); }

// "run: indexing to ..." -> "run": the part of salttap a message comes from,
// when it starts with one lowercase word and a colon.
std::string_view component_of(std::string_view message) {
  const auto colon = message.find(": ");
  if (colon == std::string_view::npos || colon == 0 || colon > 32) return {};
  const std::string_view word = message.substr(0, colon);
  for (char c : word)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return {};
  return word;
}

// What a terminal, journald or a log reader would take as the end of a line or
// as a command: C0 and C1 controls, DEL, U+2028 and U+2029. Log messages quote
// request paths and bus data; written raw, "%0A" in a path would start a
// forged log line.
void append_escaped(std::string& out, std::string_view message) {
  for (std::size_t i = 0; i < message.size(); ++i) {
    const auto c = static_cast<unsigned char>(message[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c == 0xc2 && i + 1 < message.size() && static_cast<unsigned char>(message[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(message[i + 1]) <= 0x9f) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(message[++i]));
    } else if (c == 0xe2 && message.substr(i + 1, 1) == "\x80" && i + 2 < message.size() &&
               (message[i + 2] == '\xa8' || message[i + 2] == '\xa9')) {
      out += message[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
}

std::string json_line(Level level, std::chrono::system_clock::time_point time, std::string_view message) {
  std::string clean;  // log messages may quote bytes from the bus: keep the line valid JSON
  append_utf8_replacing(clean, message);
  std::string line;
  json::StringOut out{line};
  json::Writer w(out);
  w.StartObject();
  json::key(w, "time");
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(time - seconds).count();
  json::string(w, fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:06}Z", seconds, micros));
  json::key(w, "level");
  json::string(w, kJsonNames[index_of(level)]);
  json::key(w, "message");
  json::string(w, clean);
  json::key(w, "fields");
  w.StartObject();
  json::key(w, "program");
  json::string(w, "salttap");
  if (const std::string_view component = component_of(clean); !component.empty()) {
    json::key(w, "component");
    json::string(w, component);
  }
  w.EndObject();
  w.EndObject();
  line.push_back('\n');
  return line;
}

}  // namespace

void set_level(Level level) { g_level = level; }
bool enabled(Level level) { return level >= g_level.load(std::memory_order_relaxed); }

void set_format(Format format) { g_format = format; }
Format format() { return g_format.load(); }

std::optional<Format> parse_format(std::string_view name) {
  if (name == "plain") return Format::plain;
  if (name == "journal") return Format::journal;
  if (name == "json") return Format::json;
  return std::nullopt;
}

Format detect_format(const char* journal_stream, int fd) {
  if (journal_stream == nullptr) return Format::plain;
  const std::string_view s(journal_stream);
  const auto colon = s.find(':');
  if (colon == std::string_view::npos) return Format::plain;
  unsigned long long dev = 0, ino = 0;
  const auto parse = [](std::string_view part, unsigned long long& value) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    return ec == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  if (!parse(s.substr(0, colon), dev) || !parse(s.substr(colon + 1), ino)) return Format::plain;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Format::plain;
  // systemd's own check (sd_journal_stream_fd's documentation): stderr may
  // have been redirected since systemd set the variable.
  return st.st_dev == dev && st.st_ino == ino ? Format::journal : Format::plain;
}

std::string format_line(Format format, Level level, std::chrono::system_clock::time_point time,
                        std::string_view message) {
  switch (format) {
    case Format::journal: {
      // journald makes an entry per line: one message is one entry.
      std::string line = fmt::format("<{}>{} ", kSyslogPriorities[index_of(level)], kNames[index_of(level)]);
      append_escaped(line, message);
      line.push_back('\n');
      return line;
    }
    case Format::json:
      return json_line(level, time, message);
    case Format::plain:
      break;
  }
  std::string line = fmt::format("{:%Y-%m-%dT%H:%M:%S}Z salttap {} ", std::chrono::floor<std::chrono::seconds>(time),
                                 kNames[index_of(level)]);
  append_escaped(line, message);
  line.push_back('\n');
  return line;
}

void set_output(std::FILE* out) { g_output = out; }

void write(Level level, std::string_view message) {
  const std::string line = format_line(g_format.load(), level, std::chrono::system_clock::now(), message);
  std::FILE* out = g_output.load();
  if (out == nullptr) out = stderr;
  std::lock_guard lock(g_mutex);
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace salttap::log
