#pragma once
// A list of shell-style globs (glob_match's: *, ?, [...], \), sorted once
// into what each needs, then matched against many texts: every event's tag
// against the event filters, every job's function against the function
// lists, the redaction rules and the noise functions.
//
// The answer is glob_match's, glob by glob. Only the work differs: globs
// without wildcards are compared whole, globs of `*` and `?` alone are
// matched in place, and only bracket expressions and escapes go to fnmatch.

#include <string>
#include <string_view>
#include <vector>

namespace salttap {

class GlobList {
 public:
  GlobList() = default;
  explicit GlobList(std::vector<std::string> globs);

  // True when any glob matches all of `text`.
  [[nodiscard]] bool matches_any(std::string_view text) const;
  [[nodiscard]] bool empty() const { return globs_.empty(); }
  // The globs as given.
  [[nodiscard]] const std::vector<std::string>& globs() const { return globs_; }

 private:
  std::vector<std::string> globs_;
  bool star_alone_ = false;          // a "*": every text matches
  std::vector<std::string> exact_;   // no wildcard and no escape
  std::vector<std::string> stars_;   // `*` and `?` only
  std::vector<std::string> others_;  // bracket expressions or escapes: fnmatch
};

}  // namespace salttap
