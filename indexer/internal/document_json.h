#pragma once
// Pieces every salttap document shares (docs/documents.md "Field reference").

#include <cstddef>
#include <string_view>

#include <msgpack.hpp>

#include "common/clock.h"
#include "common/json_writer.h"

namespace salttap::indexer {

// "salttap": {"doc": <kind>, "version": <salttap version>}
void write_salttap_meta(json::Writer& w, std::string_view kind);
// "@timestamp", "master", "fleet" and "salttap" keys of an open object.
void write_common(json::Writer& w, std::string_view kind, Micros timestamp, std::string_view master,
                  std::string_view fleet);
// A JSON string of `text`, each invalid UTF-8 sequence replaced by U+FFFD
// (the engines reject invalid UTF-8 in a bulk body).
void utf8_string(json::Writer& w, std::string_view text);
// `text` cut to at most `cap` bytes on a UTF-8 character boundary (the
// engines reject invalid UTF-8). Returns true when it was cut.
bool bounded_string(json::Writer& w, std::string_view text, std::size_t cap);
// Nesting depth of maps and arrays (a scalar is 0), counted up to `limit`+1.
std::size_t nesting_depth(const msgpack::object& o, std::size_t limit);

}  // namespace salttap::indexer
