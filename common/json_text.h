#pragma once
// A RapidJSON value (a parsed document, or a part of one) as compact JSON
// text, written by json::Writer: what the index setup sends back, what the
// history keeps of a hit's _source, what a test prints of an engine's answer.

#include <string>

#include "common/json_writer.h"

namespace salttap::json {

template <typename Value>
std::string to_text(const Value& v) {
  std::string out;
  StringOut sink{out};
  Writer w(sink);
  v.Accept(w);
  return out;
}

}  // namespace salttap::json
