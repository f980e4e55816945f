#include "common/enum_names.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace salttap {
namespace {

enum class Stage : std::uint8_t { built, timed_out, acked };
enum Plain { first_value, second_value };

TEST(EnumNames, EnumeratorNameIsTheNameInTheSource) {
  EXPECT_EQ(enumerator_name(Stage::built, "unknown"), "built");
  EXPECT_EQ(enumerator_name(Stage::timed_out, "unknown"), "timed_out");
  EXPECT_EQ(enumerator_name(Stage::acked, "unknown"), "acked");
  EXPECT_EQ(enumerator_name(second_value, "unknown"), "second_value");
}

TEST(EnumNames, AValueWithoutAnEnumeratorIsTheFallback) {
  EXPECT_EQ(enumerator_name(static_cast<Stage>(3), "unknown"), "unknown");
  EXPECT_EQ(enumerator_name(static_cast<Stage>(200), "unknown"), "unknown");
}

TEST(EnumNames, EnumeratorNamesAreKnownAtCompileTime) {
  static_assert(enumerator_name(Stage::acked, "") == "acked");
  static_assert(enum_names_detail::enumerator_in("f() [Value = a::b::Stage::built]") == "built");
  static_assert(enum_names_detail::enumerator_in("f() [with auto Value = (a::Stage)7; x = y]").empty());
}

constexpr EnumName<Stage> kWords[] = {{Stage::built, "built up"}, {Stage::acked, "acknowledged"}};

TEST(EnumNames, NameOfLooksTheValueUpInItsTable) {
  EXPECT_EQ(name_of(kWords, Stage::built, "?"), "built up");
  EXPECT_EQ(name_of(kWords, Stage::acked, "?"), "acknowledged");
  EXPECT_EQ(name_of(kWords, Stage::timed_out, "?"), "?");
}

}  // namespace
}  // namespace salttap
