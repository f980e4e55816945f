// run_kind: which returns are full highstates and which are dry runs, in
// every way Salt spells the arguments (kwargs maps with and without
// __kwarg__, "key=value" strings, positional mods).

#include <gtest/gtest.h>

#include "correlator/run_kind.h"
#include "tests/support/events.h"

namespace salttap::correlator {
namespace {

using salttap::testing::from_json;

RunKind kind(std::string_view fun, const char* args_json) {
  const auto args = from_json(args_json);
  return run_kind(fun, &args.get());
}

TEST(RunKind, HighstateAndApplyWithoutModsAreFull) {
  EXPECT_EQ(kind("state.highstate", "[]"), (RunKind{.test = false, .highstate = true}));
  EXPECT_EQ(kind("state.apply", "[]"), (RunKind{.test = false, .highstate = true}));
  EXPECT_EQ(run_kind("state.apply", nullptr), (RunKind{.test = false, .highstate = true}));
  EXPECT_EQ(kind("state.apply", R"([{"__kwarg__": true, "saltenv": "base"}])").highstate, true);
  EXPECT_EQ(kind("state.apply", R"(["pillar={}"])").highstate, true);
}

TEST(RunKind, TestTrueIsAFullHighstateInTestMode) {
  EXPECT_EQ(kind("state.apply", R"([{"__kwarg__": true, "test": true}])"), (RunKind{.test = true, .highstate = true}));
  // The CLI's unparsed form too; a dict without the kwargs mark is a positional value.
  EXPECT_EQ(kind("state.highstate", R"([{"__kwarg__": true, "test": true}])"),
            (RunKind{.test = true, .highstate = true}));
  EXPECT_EQ(kind("state.apply", R"([{"test": true}])"), (RunKind{.test = false, .highstate = false}));
  EXPECT_EQ(kind("state.apply", R"(["test=True"])"), (RunKind{.test = true, .highstate = true}));
  EXPECT_EQ(kind("state.apply", R"(["test=yes"])").test, true);
  EXPECT_EQ(kind("state.apply", R"(["test=False"])"), (RunKind{.test = false, .highstate = true}));
  EXPECT_EQ(kind("state.apply", R"([{"__kwarg__": true, "test": false}])").test, false);
}

TEST(RunKind, ModsExcludeAndMockArePartial) {
  EXPECT_EQ(kind("state.apply", R"(["core"])"), (RunKind{.test = false, .highstate = false}));
  EXPECT_EQ(kind("state.apply", R"(["change", {"__kwarg__": true, "test": true}])"),
            (RunKind{.test = true, .highstate = false}));
  EXPECT_FALSE(kind("state.apply", R"([{"__kwarg__": true, "mods": "core"}])").highstate);
  EXPECT_FALSE(kind("state.apply", R"(["mods=core"])").highstate);
  EXPECT_FALSE(kind("state.highstate", R"([{"__kwarg__": true, "exclude": ["a"]}])").highstate);
  EXPECT_FALSE(kind("state.highstate", R"([{"__kwarg__": true, "mock": true}])").highstate);
  EXPECT_TRUE(kind("state.highstate", R"([{"__kwarg__": true, "mock": false}])").highstate);
}

TEST(RunKind, OtherFunctionsAreNeverHighstates) {
  EXPECT_EQ(kind("state.sls", R"(["base"])"), (RunKind{.test = false, .highstate = false}));
  EXPECT_EQ(kind("state.sls", R"(["base", "test=True"])"), (RunKind{.test = true, .highstate = false}));
  EXPECT_EQ(kind("pkg.upgrade", R"([{"__kwarg__": true, "test": 1}])"), (RunKind{.test = true, .highstate = false}));
  EXPECT_EQ(kind("test.ping", "[]"), RunKind{});
  EXPECT_EQ(kind("state.apply", R"("not a list")").test, false);
}

}  // namespace
}  // namespace salttap::correlator
