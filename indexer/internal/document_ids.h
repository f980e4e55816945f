#pragma once
// Deterministic document _ids (docs/documents.md): `/`-joined parts, so a
// replay or a resend after a crash addresses the same document. A part
// longer than kMaxIdPart bytes (minion ids and jids are short; state keys and
// odd custom jids are not) becomes "~<xxh128 hex>", keeping _ids well under
// the engines' 512-byte limit.

#include <initializer_list>
#include <string>
#include <string_view>

namespace salttap::indexer {

inline constexpr std::size_t kMaxIdPart = 200;

// 32 lowercase hex digits of XXH3-128 over `bytes`.
std::string xxh128_hex(std::string_view bytes);
// XXH3-128 over several parts, each followed by a 0 byte (so ("ab","c") != ("a","bc")).
std::string xxh128_hex(std::initializer_list<std::string_view> parts);

std::string document_id(std::initializer_list<std::string_view> parts);

}  // namespace salttap::indexer
