#pragma once
// PatternSet: "does any of these case-insensitive ECMAScript regexes occur in
// this text?", answered without running std::regex in the common case.
//
// Shared by the auditor (argument patterns, once per job) and the redactor
// (key patterns, on every map key of every return). libstdc++'s std::regex is
// slow (about 1 us per short search) and recursive (a search over tens of KiB
// can overflow the stack; `.*x` is quadratic), so:
//   - each pattern is parsed for a literal that every match must contain
//     ("api[_-]?key" -> "api"; "passw(or)?d" -> "passw"); a text without any
//     such literal (ASCII case-insensitive substring scan, filtered on the
//     literals' first two bytes) cannot match, and the regex is never run;
//   - a pattern that is nothing but a literal, possibly anchored ("secret",
//     "^key$", "^id"), is decided by the scan alone;
//   - only patterns without a usable literal (top-level `|`, "^.{40}$") run
//     their regex on every text;
//   - on texts over kWindow bytes a regex runs over windows of kWindow bytes
//     (around each occurrence of its literal, or overlapping by kOverlap for
//     patterns without one), so recursion depth and time stay bounded (a
//     single libstdc++ regex_search over 64 KiB can overflow the stack). A
//     match of at most kOverlap bytes is always found (^, $ and \b at window
//     edges see the real neighbouring bytes); a longer match, or a lookahead
//     reaching past the window, may be missed.
// Otherwise the answer is exactly "std::regex_search(text, std::regex(p,
// ECMAScript | icase)) for some pattern p" (the tests compare both on a corpus).

#include <array>
#include <cstddef>
#include <cstdint>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace salttap::correlator::detail {

inline constexpr std::size_t kWindow = 4096;
inline constexpr std::size_t kOverlap = 512;

// The literal every match of `pattern` contains (lowercased), and whether the
// pattern is exactly that literal. Empty literal: none could be found.
struct RequiredLiteral {
  std::string literal;
  bool pure = false;      // the pattern is the literal, possibly anchored:
  bool at_start = false;  //   "^literal..."
  bool at_end = false;    //   "...literal$"
};
RequiredLiteral required_literal(std::string_view pattern);

// std::regex_search over windows (see above).
[[nodiscard]] bool bounded_regex_search(std::string_view text, const std::regex& re);

// Compiles with ECMAScript | icase | optimize; a bad pattern throws
// std::invalid_argument("pattern '<p>': <reason>").
std::regex compile_pattern(const std::string& pattern);

class PatternSet {
 public:
  PatternSet() = default;
  explicit PatternSet(const std::vector<std::string>& patterns);

  bool empty() const { return patterns_.empty(); }
  // True when any pattern occurs in `text`. Allocates nothing unless a
  // regex has to run (std::regex allocates on every search): that is, unless
  // `text` contains the literal of a pattern that is not a plain literal.
  [[nodiscard]] bool search(std::string_view text) const;

 private:
  struct Pattern {
    std::string source;
    std::string literal;  // lowercase; empty: always run the regex
    bool pure = false;    // literal found (at the anchored place) == match
    bool at_start = false;
    bool at_end = false;
    std::regex re;
  };
  std::vector<Pattern> patterns_;
  std::vector<std::uint32_t> always_;  // patterns without a literal
  // Literal indices (= pattern indices) by the literal's first (lowercase) byte.
  std::array<std::vector<std::uint32_t>, 256> by_first_{};
  // Pre-filter on the first two (lowercase) bytes of every literal: a bit per
  // byte pair, and per first byte: kPairStart (some literal of 2+ bytes starts
  // with it), kSingle (a 1-byte literal is exactly it).
  static constexpr std::uint8_t kPairStart = 1, kSingle = 2;
  std::array<std::uint8_t, 256> first_{};
  std::vector<std::uint64_t> pairs_;  // 65536 bits
  std::size_t min_literal_ = 0;       // shortest literal
  bool any_literal_ = false;
};

}  // namespace salttap::correlator::detail
