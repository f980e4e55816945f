#pragma once
// The words an enum's values are shown as (log lines, metric labels, documents,
// CLI tables), without a switch per enum that says the same thing again:
//   - enumerator_name(value, fallback): the enumerator's own name as the source
//     spells it ("timed_out" for DropReason::timed_out), so a value added to an
//     enum is named the moment it exists and the name cannot drift from it;
//   - name_of(table, value, fallback): for the enums shown in other words
//     ("Elasticsearch", "not msgpack"), a table with each value beside its word.
// Either gives the caller's fallback for a value that has no name.

#include <array>
#include <cstddef>
#include <string_view>
#include <utility>

namespace salttap {

template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

template <typename Enum, std::size_t N>
constexpr std::string_view name_of(const EnumName<Enum> (&names)[N], Enum value, std::string_view fallback) {
  for (const EnumName<Enum>& entry : names) {
    if (entry.value == value) return entry.name;
  }
  return fallback;
}

namespace enum_names_detail {

// enumerator_name reads the values 0 .. kScanned-1: the house's enums count from 0 and stay well below.
inline constexpr std::size_t kScanned = 32;

// The compiler spells a function template's arguments in its signature: GCC "[with auto Value =
// ns::Enum::name; ...]", Clang "[Value = ns::Enum::name]", and "(ns::Enum)7" for a value that no
// enumerator has.
template <auto Value>
constexpr std::string_view signature() {
  return __PRETTY_FUNCTION__;
}

constexpr std::string_view enumerator_in(std::string_view signature) {
  constexpr std::string_view kArgument = "Value = ";
  const std::size_t at = signature.find(kArgument);
  if (at == std::string_view::npos) return {};
  std::string_view spelled = signature.substr(at + kArgument.size());
  spelled = spelled.substr(0, spelled.find_first_of(";]"));
  if (spelled.empty() || spelled.front() == '(') return {};
  const std::size_t scope = spelled.rfind(':');
  return scope == std::string_view::npos ? spelled : spelled.substr(scope + 1);
}

template <typename Enum, std::size_t... Values>
constexpr std::array<std::string_view, sizeof...(Values)> enumerator_names(std::index_sequence<Values...> /*values*/) {
  return {enumerator_in(signature<static_cast<Enum>(Values)>())...};
}

}  // namespace enum_names_detail

template <typename Enum>
constexpr std::string_view enumerator_name(Enum value, std::string_view fallback) {
  constexpr auto kNames =
      enum_names_detail::enumerator_names<Enum>(std::make_index_sequence<enum_names_detail::kScanned>{});
  const auto index = static_cast<std::size_t>(value);
  if (index >= kNames.size() || kNames[index].empty()) return fallback;
  return kNames[index];
}

}  // namespace salttap
