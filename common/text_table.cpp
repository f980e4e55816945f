#include "common/text_table.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "common/enum_names.h"

namespace salttap {
namespace {

constexpr std::size_t kDefaultWidth = 100;
constexpr std::size_t kMinShrunk = 8;
constexpr std::string_view kGap = "  ";

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::size_t terminal_width(std::FILE* file) {
  winsize ws{};
  if (ioctl(fileno(file), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return kDefaultWidth;
}

bool use_colour(std::FILE* file) {
  const char* no_colour = std::getenv("NO_COLOR");
  return isatty(fileno(file)) == 1 && (no_colour == nullptr || *no_colour == '\0');
}

std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) { return !continuation(c); }));
}

std::string fit(std::string_view text, std::size_t width) {
  std::string out;
  // Control characters (a newline in a reason) would break the line.
  const auto append = [&out](std::string_view part) {
    for (const char c : part) out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  };
  if (display_width(text) <= width) {
    append(text);
    return out;
  }
  if (width == 0) return out;
  std::size_t chars = 0, i = 0;
  for (; i < text.size(); ++i) {
    if (!continuation(text[i]) && chars++ == width - 1) break;
  }
  append(text.substr(0, i));
  out += "…";
  return out;
}

// The ANSI SGR code of each colour; none has none, and its text stays plain.
constexpr EnumName<Colour> kColourCodes[] = {
    {Colour::green, "32"}, {Colour::red, "31"}, {Colour::yellow, "33"}, {Colour::cyan, "36"}, {Colour::bold, "1"}};

std::string paint(std::string_view text, Colour colour) {
  const std::string_view code = name_of(kColourCodes, colour, "");
  if (code.empty()) return std::string(text);
  return "\033[" + std::string(code) + "m" + std::string(text) + "\033[0m";
}

std::string render(const Table& table, std::size_t width, bool colour) {
  const std::size_t n = table.columns.size();
  std::vector<std::size_t> widths(n);
  for (std::size_t c = 0; c < n; ++c) {
    widths[c] = display_width(table.columns[c].title);
    for (const auto& row : table.rows)
      if (c < row.size()) widths[c] = std::max(widths[c], display_width(fit(row[c].text, SIZE_MAX)));
  }
  std::vector<bool> shown(n, true);
  const auto total = [&] {
    std::size_t sum = 0, columns = 0;
    for (std::size_t c = 0; c < n; ++c)
      if (shown[c]) sum += widths[c], ++columns;
    return sum + (columns > 0 ? (columns - 1) * kGap.size() : 0);
  };
  // Narrow the widest shrinkable column, one column at a time, until it
  // fits or each is down to its floor.
  const auto narrow = [&](const auto& floor_of) {
    while (total() > width) {
      std::size_t widest = n;
      for (std::size_t c = 0; c < n; ++c)
        if (shown[c] && table.columns[c].shrinkable && widths[c] > floor_of(c) &&
            (widest == n || widths[c] > widths[widest]))
          widest = c;
      if (widest == n) return;
      widths[widest] -= std::min(widths[widest] - floor_of(widest), total() - width);
    }
  };
  // Hide columns, the least needed first, until it fits.
  const auto hide = [&] {
    while (total() > width) {
      std::size_t victim = n;
      for (std::size_t c = 0; c < n; ++c)
        if (shown[c] && table.columns[c].drop > 0 &&
            (victim == n || table.columns[c].drop > table.columns[victim].drop))
          victim = c;
      if (victim == n) return;
      shown[victim] = false;
    }
  };
  // Text stays readable (each column's `readable` width) before a column is
  // hidden; only then is it cut further.
  narrow([&](std::size_t c) { return std::max(table.columns[c].readable, kMinShrunk); });
  hide();
  narrow([](std::size_t) { return kMinShrunk; });

  std::string out;
  const auto line = [&](const auto& cell_of) {
    std::string text;
    std::size_t last_shown = 0;
    for (std::size_t c = 0; c < n; ++c)
      if (shown[c]) last_shown = c;
    for (std::size_t c = 0; c < n; ++c) {
      if (!shown[c]) continue;
      const Cell cell = cell_of(c);
      const std::string cut = fit(cell.text, widths[c]);
      const std::string pad(widths[c] - display_width(cut), ' ');
      const bool last = c == last_shown;
      const std::string painted = colour ? paint(cut, cell.colour) : cut;
      if (table.columns[c].right)
        text += pad + painted;
      else
        text += painted + (last ? "" : pad);
      if (!last) text += kGap;
    }
    out += text + "\n";
  };
  line([&](std::size_t c) { return Cell{table.columns[c].title, Colour::bold}; });
  for (const auto& row : table.rows) line([&](std::size_t c) { return c < row.size() ? row[c] : Cell{}; });
  return out;
}

}  // namespace salttap
