// libFuzzer target: `run`'s coverage record (recovery/reconcile_state.h), the
// file a crash, a full disk or a hand edit may leave in any shape.
//
// Contract checked: any bytes either parse or give a one-line reason, never
// both; what parses formats back to text that parses to the same state; a
// state's times are never negative.
//
// Seeds: make_corpus.py (the writer's own files, and damaged ones).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "recovery/reconcile_state.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace salttap;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto state = recovery::parse_reconcile_state(text, error);
  if (!state) {
    FUZZ_CHECK(!error.empty());
    FUZZ_CHECK(error.find('\n') == std::string::npos);
    return 0;
  }
  FUZZ_CHECK(error.empty());
  FUZZ_CHECK(state->live_until >= 0);
  FUZZ_CHECK(!state->open_since || *state->open_since >= 0);
  std::string again_error;
  const auto again = recovery::parse_reconcile_state(recovery::format_reconcile_state(*state), again_error);
  FUZZ_CHECK(again && *again == *state);
  return 0;
}
