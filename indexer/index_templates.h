#pragma once
// Request bodies for the index contract: one template per index kind built
// from the embedded mappings/<kind>.json, and the retention policies built
// from mappings/{ilm,ism}-policy.json. Pure (no I/O): index_setup sends them.
//
// Placeholders resolved here (mappings/README.md):
//   {"type": "$flat"}        -> the server's whole-object type, or the field is dropped
//   "{retention_days}"       -> inside policy strings
//   "{index_patterns}"       -> the salttap index patterns (an array)

#include <span>
#include <string>
#include <string_view>

#include "indexer/index_layout.h"

namespace salttap::indexer {

inline constexpr std::string_view kFlatPlaceholder = "$flat";

enum class TemplateApi { composable, legacy };

struct TemplateOptions {
  TemplateApi api = TemplateApi::composable;
  std::string_view flat_type;    // "flattened", "flat_object"; empty: leave `return_flat` out
  std::string lifecycle_policy;  // ILM policy for index.lifecycle.name; empty: none
};

// "<prefix>-<kind>": the template's name.
std::string template_name(const IndexLayout& layout, std::string_view kind);
// "/_index_template/<prefix>-<kind>" or "/_template/<prefix>-<kind>".
std::string template_path(const IndexLayout& layout, std::string_view kind, TemplateApi api);
// The template body; throws std::invalid_argument for a kind without a mapping file.
std::string template_body(std::string_view kind, const IndexLayout& layout, const TemplateSettings& settings,
                          const TemplateOptions& options);
// True when the kind's mapping has a field with the flat placeholder.
bool has_flat_field(std::string_view kind);

// "<prefix>-retention": one policy for every salttap index.
std::string lifecycle_policy_name(const IndexLayout& layout);
// ILM policy: delete `retention_days` after index creation.
std::string ilm_policy_body(int retention_days);
// ISM policy: same, attached to new indices matching `kinds`' patterns by its ism_template.
std::string ism_policy_body(int retention_days, const IndexLayout& layout, std::span<const std::string_view> kinds);

}  // namespace salttap::indexer
