#include "recovery/reconcile_state.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "common/errno_text.h"

namespace salttap::recovery {
namespace {

constexpr std::string_view kMagic = "salttap-reconcile 1";
constexpr std::size_t kMaxFile = 8 << 20;  // kMaxOpenJids lines of jids fit well

// The next line of `text` (without its '\n'), or nullopt at the end.
std::optional<std::string_view> next_line(std::string_view& text) {
  if (text.empty()) return std::nullopt;
  const auto nl = text.find('\n');
  const std::string_view line = text.substr(0, nl);
  text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  return line;
}

// "<key> <value>": the value, if the key matches.
std::optional<std::string_view> value_of(std::optional<std::string_view> line, std::string_view key) {
  if (!line || line->size() <= key.size() || !line->starts_with(key) || (*line)[key.size()] != ' ') return std::nullopt;
  return line->substr(key.size() + 1);
}

std::optional<Micros> parse_micros(std::string_view v) {
  Micros out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || out < 0) return std::nullopt;
  return out;
}

// A jid as Salt makes them (20 digits, maybe "_<pid>"), or one a caller
// passed: printable, no spaces, bounded.
bool plausible_jid(std::string_view jid) {
  if (jid.empty() || jid.size() > 128) return false;
  return std::all_of(jid.begin(), jid.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

}  // namespace

std::string format_reconcile_state(const ReconcileState& s) {
  std::string out = fmt::format("{}\nlive_until {}\nopen_since {}\n", kMagic, s.live_until,
                                s.open_since ? std::to_string(*s.open_since) : std::string("-"));
  for (const std::string& jid : s.open) fmt::format_to(std::back_inserter(out), "open {}\n", jid);
  if (s.open_truncated) out += "open_truncated\n";
  return out;
}

std::optional<ReconcileState> parse_reconcile_state(std::string_view text, std::string& error) {
  if (next_line(text) != kMagic) {
    error = fmt::format("does not begin with \"{}\"", kMagic);
    return std::nullopt;
  }
  ReconcileState s;
  const auto live = value_of(next_line(text), "live_until");
  const auto live_at = live ? parse_micros(*live) : std::nullopt;
  if (!live_at) {
    error = "the second line is not \"live_until <microseconds>\"";
    return std::nullopt;
  }
  s.live_until = *live_at;
  const auto open = value_of(next_line(text), "open_since");
  if (!open) {
    error = "the third line is not \"open_since <microseconds or ->\"";
    return std::nullopt;
  }
  if (*open != "-") {
    s.open_since = parse_micros(*open);
    if (!s.open_since) {
      error = "open_since is neither microseconds nor -";
      return std::nullopt;
    }
  }
  while (const auto line = next_line(text)) {
    if (s.open_truncated) {
      error = "a line after open_truncated";
      return std::nullopt;
    }
    if (*line == "open_truncated") {
      s.open_truncated = true;
      continue;
    }
    const auto jid = value_of(line, "open");
    if (!jid || !plausible_jid(*jid)) {
      error = R"(a line after the third is neither "open <jid>" nor "open_truncated")";
      return std::nullopt;
    }
    if (s.open.size() == kMaxOpenJids) {
      error = fmt::format("more than {} open jobs", kMaxOpenJids);
      return std::nullopt;
    }
    s.open.emplace_back(*jid);
  }
  return s;
}

ReconcileStateFile::ReconcileStateFile(std::filesystem::path path, StateFilesystem& fs) : file_(std::move(path), fs) {}

ReconcileStateFile::Read ReconcileStateFile::read(ReconcileState& state, std::string& error) {
  file_.remove_leftover_temp();  // the record before that write is the one to read
  const auto text = file_.read(kMaxFile);
  if (!text) {
    const FileError& e = text.error();
    if (e.error == ENOENT) return Read::absent;
    error = e.error == EFBIG ? fmt::format("{}: larger than {} bytes", path().string(), kMaxFile)
                             : fmt::format("{}: cannot {}: {}", path().string(), e.step, errno_text(e.error));
    return Read::bad;
  }
  std::string why;
  const auto parsed = parse_reconcile_state(text.value(), why);
  if (!parsed) {
    error = fmt::format("{}: {}", path().string(), why);
    return Read::bad;
  }
  state = *parsed;
  return Read::found;
}

Result<void, FileError> ReconcileStateFile::write(const ReconcileState& state) {
  return file_.replace(format_reconcile_state(state));
}

}  // namespace salttap::recovery
