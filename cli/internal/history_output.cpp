#include "cli/internal/history_output.h"

#include "common/log.h"
#include "history/query_bodies.h"

namespace salttap::cli {

int report(std::string_view command, const history::SearchError& error) {
  log::error("{}: {}", command, error.message);
  return error.problem == history::SearchProblem::no_indices ? kHistoryNoIndices : kHistoryEngine;
}

Colour status_colour(std::string_view status) {
  if (status == "succeeded") return Colour::green;
  if (status == "failed") return Colour::red;
  if (status == "missing") return Colour::yellow;
  if (status == "running") return Colour::cyan;
  return Colour::none;
}

Colour risk_colour(std::string_view risk) {
  if (risk == "high" || risk == "critical") return Colour::red;
  if (risk == "medium") return Colour::yellow;
  return Colour::none;
}

std::string short_time(std::string_view iso) {
  if (iso.size() < 19 || iso[10] != 'T') return iso.empty() ? "-" : std::string(iso);
  std::string out(iso.substr(0, 19));
  out[10] = ' ';
  return out;
}

std::string or_dash(std::string_view s) { return s.empty() ? "-" : std::string(s); }

void print(std::FILE* out, std::string_view text) { std::fwrite(text.data(), 1, text.size(), out); }

}  // namespace salttap::cli
