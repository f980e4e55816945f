#include "correlator/pattern_set.h"

#include <stdexcept>

namespace salttap::correlator::detail {
namespace {

constexpr char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
constexpr bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Index just past the class starting at p[i] == '[', or npos when it is not
// obviously well formed (then the caller gives up on a literal).
std::size_t skip_class(std::string_view p, std::size_t i) {
  ++i;
  if (i < p.size() && p[i] == '^') ++i;
  if (i < p.size() && p[i] == ']') return std::string_view::npos;  // "[]" / "[]a]": engine-specific
  while (i < p.size()) {
    if (p[i] == '\\') {
      i += 2;
      continue;
    }
    if (p[i] == ']') return i + 1;
    ++i;
  }
  return std::string_view::npos;
}

// Index just past the group starting at p[i] == '(', or npos.
std::size_t skip_group(std::string_view p, std::size_t i) {
  int depth = 0;
  while (i < p.size()) {
    const char c = p[i];
    if (c == '\\') {
      i += 2;
      continue;
    }
    if (c == '[') {
      i = skip_class(p, i);
      if (i == std::string_view::npos) return i;
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')' && --depth == 0) return i + 1;
    ++i;
  }
  return std::string_view::npos;
}

bool ieq_prefix(std::string_view text, std::size_t at, std::string_view lower_lit) {
  if (text.size() - at < lower_lit.size()) return false;
  for (std::size_t j = 1; j < lower_lit.size(); ++j)  // byte 0 matched by the caller
    if (lower(text[at + j]) != lower_lit[j]) return false;
  return true;
}

}  // namespace

RequiredLiteral required_literal(std::string_view p) {
  // "^literal$", "^literal", "literal$": decided by where the literal occurs.
  const bool at_start = !p.empty() && p.front() == '^';
  const bool at_end = p.size() > (at_start ? 1u : 0u) && p.back() == '$' && (p.size() < 2 || p[p.size() - 2] != '\\');
  if (at_start || at_end) {
    RequiredLiteral inner =
        required_literal(p.substr(at_start ? 1 : 0, p.size() - (at_start ? 1 : 0) - (at_end ? 1 : 0)));
    if (inner.pure && !inner.at_start && !inner.at_end) {
      inner.at_start = at_start;
      inner.at_end = at_end;
      return inner;
    }
  }
  std::string run;
  std::string best;
  bool pure = true;
  bool last_literal = false;  // the last atom is the last byte of `run`
  auto close = [&] {
    if (run.size() > best.size()) best = run;
    run.clear();
    last_literal = false;
  };
  auto give_up = [] { return RequiredLiteral{}; };
  std::size_t i = 0;
  while (i < p.size()) {
    const char c = p[i];
    switch (c) {
      case '\\': {
        if (i + 1 >= p.size()) return give_up();
        const char e = p[i + 1];
        if (!is_alnum(e)) {  // identity escape: \. \- \\ ...
          run.push_back(lower(e));
          last_literal = true;
          i += 2;
          break;
        }
        // Classes, assertions, control and numeric escapes, back-references:
        // not a known literal. Skip their operands so hex digits are not
        // mistaken for literal text.
        pure = false;
        close();
        i += 2;
        if (e == 'x')
          i += 2;
        else if (e == 'u')
          i += 4;
        else if (e == 'c')
          i += 1;
        else if (is_digit(e))
          while (i < p.size() && is_digit(p[i])) ++i;
        break;
      }
      case '[':
        pure = false;
        close();
        i = skip_class(p, i);
        if (i == std::string_view::npos) return give_up();
        break;
      case '(':
        pure = false;
        close();
        i = skip_group(p, i);
        if (i == std::string_view::npos) return give_up();
        break;
      case '|':
        return give_up();  // top-level alternation: no single required literal
      case '.':
      case '^':
      case '$':
        pure = false;
        close();
        ++i;
        break;
      case '*':
      case '?':
      case '{':
      case '+': {
        pure = false;
        if (last_literal && c != '+') run.pop_back();  // the byte became optional
        close();
        if (c == '{') {
          const std::size_t end = p.find('}', i);
          if (end == std::string_view::npos) return give_up();
          i = end + 1;
        } else {
          ++i;
        }
        if (i < p.size() && p[i] == '?') ++i;  // lazy modifier
        break;
      }
      case ')':
      case ']':
      case '}':
        return give_up();  // unbalanced: let the engine decide everything
      default:
        run.push_back(lower(c));
        last_literal = true;
        ++i;
        break;
    }
  }
  close();
  RequiredLiteral out;
  out.literal = std::move(best);
  out.pure = pure && !out.literal.empty();
  return out;
}

namespace {

// regex_search over text[from, to), seeing the real neighbouring bytes for
// ^, $ and \b at the edges of the window.
bool window_search(std::string_view text, std::size_t from, std::size_t to, const std::regex& re) {
  auto flags = std::regex_constants::match_default;
  if (from > 0) flags |= std::regex_constants::match_prev_avail;
  if (to < text.size()) flags |= std::regex_constants::match_not_eol | std::regex_constants::match_not_eow;
  return std::regex_search(text.data() + from, text.data() + to, re, flags);
}

}  // namespace

bool bounded_regex_search(std::string_view text, const std::regex& re) {
  if (text.size() <= kWindow) return std::regex_search(text.data(), text.data() + text.size(), re);
  constexpr std::size_t kStep = kWindow - kOverlap;
  for (std::size_t from = 0;; from += kStep) {
    const std::size_t to = std::min(text.size(), from + kWindow);
    if (window_search(text, from, to, re)) return true;
    if (to == text.size()) return false;
  }
}

std::regex compile_pattern(const std::string& pattern) {
  try {
    // No nosubs: it would change the meaning of back-references.
    return std::regex(pattern, std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("pattern '" + pattern + "': " + e.what());
  }
}

PatternSet::PatternSet(const std::vector<std::string>& patterns) {
  patterns_.reserve(patterns.size());
  for (const std::string& src : patterns) {
    RequiredLiteral lit = required_literal(src);
    const auto index = static_cast<std::uint32_t>(patterns_.size());
    patterns_.push_back(Pattern{src, std::move(lit.literal), lit.pure, lit.at_start, lit.at_end, compile_pattern(src)});
    const Pattern& pat = patterns_.back();
    if (pat.literal.empty()) {
      always_.push_back(index);
      continue;
    }
    const auto c0 = static_cast<unsigned char>(pat.literal[0]);
    by_first_[c0].push_back(index);
    if (pat.literal.size() == 1) {
      first_[c0] |= kSingle;
    } else {
      if (pairs_.empty()) pairs_.assign(65536 / 64, 0);
      const unsigned pair = c0 << 8 | static_cast<unsigned char>(pat.literal[1]);
      pairs_[pair / 64] |= std::uint64_t{1} << (pair % 64);
      first_[c0] |= kPairStart;
    }
    min_literal_ = any_literal_ ? std::min(min_literal_, pat.literal.size()) : pat.literal.size();
    any_literal_ = true;
  }
}

bool PatternSet::search(std::string_view text) const {
  if (any_literal_ && text.size() >= min_literal_) {
    const bool big = text.size() > kWindow;
    std::uint64_t tried = 0;               // small texts: patterns whose regex already ran (first 64)
    std::vector<std::size_t> searched_to;  // big texts: end of the last window searched, per pattern
    const std::size_t n = text.size();
    for (std::size_t at = 0; at < n; ++at) {
      const auto c0 = static_cast<unsigned char>(lower(text[at]));
      const std::uint8_t f = first_[c0];
      if (!f) continue;
      if (!(f & kSingle)) {  // only literals of 2+ bytes start here: check the pair
        if (at + 1 >= n) continue;
        const unsigned pair = c0 << 8 | static_cast<unsigned char>(lower(text[at + 1]));
        if (!(pairs_[pair / 64] >> (pair % 64) & 1)) continue;
      }
      const auto& bucket = by_first_[c0];
      for (const std::uint32_t idx : bucket) {
        const Pattern& pat = patterns_[idx];
        if (!ieq_prefix(text, at, pat.literal)) continue;
        if (pat.pure) {
          if ((!pat.at_start || at == 0) && (!pat.at_end || at + pat.literal.size() == text.size())) return true;
          continue;
        }
        if (!big) {
          const std::uint64_t bit = idx < 64 ? (std::uint64_t{1} << idx) : 0;
          if (tried & bit) continue;
          tried |= bit;
          if (std::regex_search(text.data(), text.data() + text.size(), pat.re)) return true;
          continue;
        }
        // A match of at most kOverlap bytes containing this occurrence lies
        // in [at - kOverlap, at + literal + kOverlap]: search one window from
        // there, unless the previous window already covered it.
        if (searched_to.empty()) searched_to.assign(patterns_.size(), 0);
        std::size_t& to = searched_to[idx];
        if (to == text.size() || (to != 0 && at + pat.literal.size() + kOverlap <= to)) continue;
        const std::size_t from = at > kOverlap ? at - kOverlap : 0;
        to = std::min(text.size(), from + kWindow);
        if (window_search(text, from, to, pat.re)) return true;
      }
    }
  }
  for (const std::uint32_t idx : always_)
    if (bounded_regex_search(text, patterns_[idx].re)) return true;
  return false;
}

}  // namespace salttap::correlator::detail
