#include "indexer/index_templates.h"

#include <stdexcept>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/json_value.h"
#include "indexer/internal/embedded_mappings.h"

namespace salttap::indexer {
namespace {

using rapidjson::Document;
using rapidjson::Value;

Document parse_embedded(std::string_view name) {
  const std::string_view text = embedded_file(name);
  if (text.empty()) throw std::invalid_argument(fmt::format("no embedded mappings/{}", name));
  Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError() || !doc.IsObject())
    throw std::invalid_argument(fmt::format("embedded mappings/{} is not a JSON object", name));
  return doc;
}

Value string_value(std::string_view s, Document::AllocatorType& a) {
  return {s.data(), static_cast<rapidjson::SizeType>(s.size()), a};
}

bool is_flat_placeholder(const Value& field) {
  if (!field.IsObject()) return false;
  const auto type = field.FindMember("type");
  return type != field.MemberEnd() && type->value.IsString() && type->value.GetString() == kFlatPlaceholder;
}

// The whole-object field as each server spells it. depth_limit matches the
// document builder's rule (only objects of depth <= 20 are copied there).
Value flat_field(std::string_view type, Document::AllocatorType& a) {
  Value field(rapidjson::kObjectType);
  field.AddMember("type", string_value(type, a), a);
  if (type == "flattened") {
    field.AddMember("depth_limit", 20, a);
    field.AddMember("ignore_above", 1024, a);
  }
  return field;
}

// Replaces (or drops) every {"type": "$flat"} under `properties`.
void resolve_flat(Value& properties, std::string_view type, Document::AllocatorType& a) {
  if (!properties.IsObject()) return;
  for (auto it = properties.MemberBegin(); it != properties.MemberEnd();) {
    if (is_flat_placeholder(it->value)) {
      if (type.empty()) {
        it = properties.EraseMember(it);
        continue;
      }
      it->value = flat_field(type, a);
    } else if (it->value.IsObject()) {
      const auto sub = it->value.FindMember("properties");
      if (sub != it->value.MemberEnd()) resolve_flat(sub->value, type, a);
    }
    ++it;
  }
}

bool contains_flat(const Value& properties) {
  if (!properties.IsObject()) return false;
  for (const auto& m : properties.GetObject()) {
    if (is_flat_placeholder(m.value)) return true;
    if (m.value.IsObject()) {
      const auto sub = m.value.FindMember("properties");
      if (sub != m.value.MemberEnd() && contains_flat(sub->value)) return true;
    }
  }
  return false;
}

Value& object_member(Value& parent, const char* name, Document::AllocatorType& a) {
  auto it = parent.FindMember(name);
  if (it == parent.MemberEnd()) {
    parent.AddMember(Value(name, a), Value(rapidjson::kObjectType), a);
    it = parent.FindMember(name);
  }
  return it->value;
}

void set_member(Value& object, const char* name, Value value, Document::AllocatorType& a) {
  auto it = object.FindMember(name);
  if (it != object.MemberEnd())
    it->value = std::move(value);
  else
    object.AddMember(Value(name, a), std::move(value), a);
}

// Fills "{retention_days}" into strings and "{index_patterns}" with `patterns`.
void fill_policy(Value& v, const std::string& days, const Value& patterns, Document::AllocatorType& a) {
  if (v.IsString()) {
    const std::string_view s(v.GetString(), v.GetStringLength());
    if (s == "{index_patterns}") {
      v.CopyFrom(patterns, a);
      return;
    }
    std::string filled(s);
    for (auto pos = filled.find("{retention_days}"); pos != std::string::npos;
         pos = filled.find("{retention_days}", pos + days.size()))
      filled.replace(pos, std::string_view("{retention_days}").size(), days);
    if (filled != s) v = string_value(filled, a);
  } else if (v.IsObject()) {
    for (auto& m : v.GetObject()) fill_policy(m.value, days, patterns, a);
  } else if (v.IsArray()) {
    for (auto& e : v.GetArray()) fill_policy(e, days, patterns, a);
  }
}

}  // namespace

std::string template_name(const IndexLayout& layout, std::string_view kind) {
  return fmt::format("{}-{}", layout.prefix, kind);
}

std::string template_path(const IndexLayout& layout, std::string_view kind, TemplateApi api) {
  return fmt::format("/{}/{}", api == TemplateApi::composable ? "_index_template" : "_template",
                     template_name(layout, kind));
}

bool has_flat_field(std::string_view kind) {
  const Document doc = parse_embedded(fmt::format("{}.json", kind));
  const auto mappings = doc.FindMember("mappings");
  if (mappings == doc.MemberEnd() || !mappings->value.IsObject()) return false;
  const auto props = mappings->value.FindMember("properties");
  return props != mappings->value.MemberEnd() && contains_flat(props->value);
}

std::string template_body(std::string_view kind, const IndexLayout& layout, const TemplateSettings& settings,
                          const TemplateOptions& options) {
  Document file = parse_embedded(fmt::format("{}.json", kind));
  auto& a = file.GetAllocator();

  Value& mappings = object_member(file, "mappings", a);
  const auto props = mappings.FindMember("properties");
  if (props != mappings.MemberEnd()) resolve_flat(props->value, options.flat_type, a);

  Value& index_settings = object_member(file, "settings", a);
  set_member(index_settings, "index.number_of_shards", Value(settings.number_of_shards), a);
  set_member(index_settings, "index.number_of_replicas", Value(settings.number_of_replicas), a);
  if (const std::string every = settings.refresh_interval_for(kind); !every.empty())
    set_member(index_settings, "index.refresh_interval", string_value(every, a), a);
  if (!options.lifecycle_policy.empty())
    set_member(index_settings, "index.lifecycle.name", string_value(options.lifecycle_policy, a), a);

  Document body(rapidjson::kObjectType, &a);
  Value patterns(rapidjson::kArrayType);
  patterns.PushBack(string_value(layout.index_pattern(kind), a), a);
  body.AddMember("index_patterns", patterns, a);
  if (options.api == TemplateApi::composable) {
    body.AddMember("priority", settings.template_priority, a);
    Value tmpl(rapidjson::kObjectType);
    tmpl.AddMember("settings", index_settings, a);
    tmpl.AddMember("mappings", mappings, a);
    body.AddMember("template", tmpl, a);
    Value meta(rapidjson::kObjectType);
    meta.AddMember("managed_by", "salttap", a);
    body.AddMember("_meta", meta, a);
  } else {
    // Legacy templates: `order` instead of priority, no _meta.
    body.AddMember("order", settings.template_priority, a);
    body.AddMember("settings", index_settings, a);
    body.AddMember("mappings", mappings, a);
  }
  return json::to_text(body);
}

std::string lifecycle_policy_name(const IndexLayout& layout) { return fmt::format("{}-retention", layout.prefix); }

std::string ilm_policy_body(int retention_days) {
  Document doc = parse_embedded("ilm-policy.json");
  fill_policy(doc, std::to_string(retention_days), Value(rapidjson::kArrayType), doc.GetAllocator());
  return json::to_text(doc);
}

std::string ism_policy_body(int retention_days, const IndexLayout& layout, std::span<const std::string_view> kinds) {
  Document doc = parse_embedded("ism-policy.json");
  auto& a = doc.GetAllocator();
  Value patterns(rapidjson::kArrayType);
  for (const auto kind : kinds) patterns.PushBack(string_value(layout.index_pattern(kind), a), a);
  fill_policy(doc, std::to_string(retention_days), patterns, a);
  return json::to_text(doc);
}

}  // namespace salttap::indexer
