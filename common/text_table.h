#pragma once
// Plain-text tables for the terminal: columns as wide as their widest cell,
// narrowed (cells cut with "…") until a line fits the width, and colour only
// when asked (the caller decides: a TTY, no NO_COLOR).

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace salttap {

enum class Colour { none, green, red, yellow, cyan, bold };

struct Cell {
  std::string text;
  Colour colour = Colour::none;
};

struct TableColumn {
  std::string title;
  bool shrinkable = false;    // may be narrowed to fit (free text: function, target, reason)
  bool right = false;         // numbers
  int drop = 0;               // when narrowing is not enough: hidden, highest first (0: always shown)
  std::size_t readable = 16;  // a shrinkable column is cut to this before any column is hidden
};

struct Table {
  std::vector<TableColumn> columns;
  std::vector<std::vector<Cell>> rows;  // one Cell per column
};

// The width of the terminal on `file` (TIOCGWINSZ), else 100.
std::size_t terminal_width(std::FILE* file);
// Whether to colour what goes to `file`: a terminal, and NO_COLOR unset.
bool use_colour(std::FILE* file);

// Display width of UTF-8 text: one column per character.
std::size_t display_width(std::string_view text);
// At most `width` columns of `text`, ending in "…" when cut.
std::string fit(std::string_view text, std::size_t width);
// The colour's escape around `text` (nothing for Colour::none).
std::string paint(std::string_view text, Colour colour);

// The table, one "\n"-ended line per row, each at most `width` columns when
// narrowing the shrinkable columns to their `readable` width, then hiding
// the droppable ones, then narrowing to 8 can make it so.
std::string render(const Table& table, std::size_t width, bool colour);

}  // namespace salttap
