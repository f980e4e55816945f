#pragma once
// Small text utilities shared by every folder.

#include <string>
#include <string_view>

namespace salttap {

// Standard base64 (RFC 4648, with padding), as Python's base64.b64encode.
std::string base64_encode(std::string_view bytes);
std::string base64_decode(std::string_view text);  // invalid input -> best effort

// True when `s` is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool is_valid_utf8(std::string_view s);
// Appends `s` to `out`, replacing each invalid UTF-8 sequence with U+FFFD,
// the way Python's bytes.decode("utf-8", "replace") does.
void append_utf8_replacing(std::string& out, std::string_view s);

// Shell-style glob match (fnmatch(3) without flags): *, ?, [...].
[[nodiscard]] bool glob_match(std::string_view pattern, std::string_view text);
// glob_match for a pattern of `*`, `?` and literal bytes only (no `[`, no
// backslash) and a text without NUL bytes, matched in place.
[[nodiscard]] bool star_glob_match(std::string_view pattern, std::string_view text);

}  // namespace salttap
