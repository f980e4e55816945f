#pragma once
// JSON text written straight into a std::string, byte for byte what
// RapidJSON's Writer<UTF8> writes (json_writer.h), without its per-byte
// output calls: runs of bytes that need no escape are copied at once.
//
// RapidJSON's rules, kept exactly: '"' and '\\' and the control bytes below
// 0x20 are escaped (\b \t \n \f \r, others \u00XX with upper-case hex);
// everything else, bytes >= 0x80 included, is copied as it is. Doubles use
// RapidJSON's own shortest round-trip formatting (1.0, 1e21, -0.0).

#include <cstdint>
#include <string>
#include <string_view>

namespace salttap::json {

// Appends "s", escaped. `s` is taken as it is (no UTF-8 check).
void append_string(std::string& out, std::string_view s);
// Appends "s" with each invalid UTF-8 sequence replaced by U+FFFD first (the
// text of every string salttap prints from the bus).
void append_text(std::string& out, std::string_view s);
void append_double(std::string& out, double d);  // finite values only
void append_uint(std::string& out, std::uint64_t v);
void append_int(std::string& out, std::int64_t v);

}  // namespace salttap::json
