#pragma once
// A parsed RapidJSON value, read and written back: a member by name, a
// string member, and the value as compact JSON text (json::Writer). What the
// index setup, the server detection and the history read of an engine's answers.

#include <string>

#include <rapidjson/document.h>

#include "common/json_writer.h"

namespace salttap::json {

// The member `name` of `v`; nullptr when `v` is no object or has no such member.
inline const rapidjson::Value* member(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  const auto it = v.FindMember(name);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

// The string member `name` of `v`; empty when there is none.
inline std::string string_member(const rapidjson::Value& v, const char* name) {
  const auto* m = member(v, name);
  return m && m->IsString() ? std::string(m->GetString(), m->GetStringLength()) : std::string();
}

template <typename Value>
std::string to_text(const Value& v) {
  std::string out;
  StringOut sink{out};
  Writer w(sink);
  v.Accept(w);
  return out;
}

}  // namespace salttap::json
