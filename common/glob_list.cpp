#include "common/glob_list.h"

#include <algorithm>

#include "common/text.h"

namespace salttap {

GlobList::GlobList(std::vector<std::string> globs) : globs_(std::move(globs)) {
  for (const std::string& g : globs_) {
    if (g == "*")
      star_alone_ = true;
    else if (g.find_first_of("[\\") != std::string::npos)
      others_.push_back(g);
    else if (g.find_first_of("*?") != std::string::npos)
      stars_.push_back(g);
    else
      exact_.push_back(g);
  }
}

bool GlobList::matches_any(std::string_view text) const {
  if (star_alone_) return true;
  if (globs_.empty()) return false;
  // fnmatch reads a text only up to a NUL byte: such a text takes glob_match's
  // own path for every glob, so that the answer stays glob_match's.
  if (text.find('\0') != std::string_view::npos)
    return std::any_of(globs_.begin(), globs_.end(), [&](const std::string& g) { return glob_match(g, text); });
  return std::any_of(exact_.begin(), exact_.end(), [&](const std::string& g) { return g == text; }) ||
         std::any_of(stars_.begin(), stars_.end(), [&](const std::string& g) { return star_glob_match(g, text); }) ||
         std::any_of(others_.begin(), others_.end(), [&](const std::string& g) { return glob_match(g, text); });
}

}  // namespace salttap
