// libFuzzer target: the fleet state file (fleet/fleet_state_format.h), which
// a crash, a full disk or a hand edit may leave in any shape.
//
// Contract checked: any bytes either decode or give a one-line reason; what
// decodes encodes back to text that decodes to the same text again; times
// are never negative and minion ids are sorted and unique.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fleet/fleet_state_format.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace salttap;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto state = fleet::decode_fleet_state(text);
  if (!state) {
    FUZZ_CHECK(!state.error().empty());
    FUZZ_CHECK(state.error().find('\n') == std::string::npos);
    return 0;
  }
  FUZZ_CHECK(state.value().saved_at >= 0 && state.value().blind_total >= 0);
  for (std::size_t i = 1; i < state.value().minions.size(); ++i)
    FUZZ_CHECK(state.value().minions[i - 1].first < state.value().minions[i].first);
  const std::string encoded = fleet::encode_fleet_state(state.value());
  const auto again = fleet::decode_fleet_state(encoded);
  FUZZ_CHECK(again && fleet::encode_fleet_state(again.value()) == encoded);
  return 0;
}
