#include "fleet/minion_entity.h"

#include <array>

namespace salttap::fleet {
namespace {

constexpr std::array<std::string_view, 8> kVia = {"none",  "return", "find_job", "progress",
                                                  "start", "auth",   "beacon",   "refresh"};
constexpr std::array<std::string_view, kLivenessStates> kLiveness = {"ok", "silent", "never_heard", "ignored"};
constexpr std::array<std::string_view, kFreshnessStates> kFreshness = {"fresh", "stale", "never", "unwatched"};

template <typename E, std::size_t N>
std::optional<E> parse(const std::array<std::string_view, N>& names, std::string_view text) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<E>(i);
  return std::nullopt;
}

}  // namespace

std::string_view to_string(HeardVia via) { return kVia.at(static_cast<std::size_t>(via)); }
std::optional<HeardVia> parse_heard_via(std::string_view text) { return parse<HeardVia>(kVia, text); }
std::string_view to_string(Liveness liveness) { return kLiveness.at(static_cast<std::size_t>(liveness)); }
std::optional<Liveness> parse_liveness(std::string_view text) { return parse<Liveness>(kLiveness, text); }
std::string_view to_string(Freshness freshness) { return kFreshness.at(static_cast<std::size_t>(freshness)); }
std::optional<Freshness> parse_freshness(std::string_view text) { return parse<Freshness>(kFreshness, text); }

}  // namespace salttap::fleet
