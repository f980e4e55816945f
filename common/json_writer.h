#pragma once
// RapidJSON writing straight into a std::string, and the two calls every
// renderer of salttap documents uses.
//
// json::Writer is RapidJSON's compact writer with its strings (values and
// keys) written by json_escape.h and its raw values appended, instead of
// one Put() per byte: the same bytes, in bulk (strings and rendered returns
// are most of every document). PrettyWriter is RapidJSON's own.

#include <cstring>
#include <string>
#include <string_view>

#include "common/json_escape.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/writer.h>

namespace salttap::json {

struct StringOut {
  using Ch = char;
  std::string& s;
  // RapidJSON's output-stream concept names these two.
  void Put(char c) { s.push_back(c); }  // NOLINT(readability-identifier-naming)
  void Flush() {}                       // NOLINT(readability-identifier-naming)
};
class Writer : public rapidjson::Writer<StringOut> {
  using Base = rapidjson::Writer<StringOut>;

 public:
  explicit Writer(StringOut& os) : Base(os) {}

  // RapidJSON's names and signatures, so that generic code keeps working.
  // NOLINTBEGIN(readability-identifier-naming)
  bool String(const char* str, rapidjson::SizeType length, bool /*copy*/ = false) {
    Prefix(rapidjson::kStringType);
    append_string(os_->s, std::string_view(str, length));
    return EndValue(true);
  }
  bool String(const char* str) { return String(str, static_cast<rapidjson::SizeType>(std::strlen(str))); }
  bool String(const std::string& str) { return String(str.data(), static_cast<rapidjson::SizeType>(str.size())); }
  bool Key(const char* str, rapidjson::SizeType length, bool copy = false) { return String(str, length, copy); }
  bool Key(const char* str) { return String(str); }
  bool Key(const std::string& str) { return String(str); }
  // A string of `text` with each invalid UTF-8 sequence replaced by U+FFFD
  // (json::append_text): one pass for valid text.
  bool Text(std::string_view text) {
    Prefix(rapidjson::kStringType);
    append_text(os_->s, text);
    return EndValue(true);
  }
  // Ready-made JSON (a rendered return, say), appended at once.
  bool RawValue(const char* json, std::size_t length, rapidjson::Type type) {
    Prefix(type);
    os_->s.append(json, length);
    return EndValue(true);
  }
  // NOLINTEND(readability-identifier-naming)
};
using PrettyWriter = rapidjson::PrettyWriter<StringOut>;

template <typename W>
void string(W& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}
template <typename W>
void key(W& w, std::string_view k) {
  w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
}

}  // namespace salttap::json
