#pragma once
// RapidJSON writing straight into a std::string, and the two calls every
// renderer of salttap documents uses.

#include <string>
#include <string_view>

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
using Writer = rapidjson::Writer<StringOut>;
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
