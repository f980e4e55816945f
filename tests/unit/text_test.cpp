// Small text utilities (common/text.h).

#include <gtest/gtest.h>

#include <string>

#include "common/text.h"

namespace salttap {
namespace {

TEST(Base64, DecodesWhatItEncodes) {
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes) << i;
    bytes.push_back(static_cast<char>(0xf7 * i));
  }
}

TEST(Base64, UnpaddedTextDecodesWithinItsBuffer) {
  // Regression: corpus/event_from_json/crash-base64-unpadded-overflow (a heap
  // overflow under ASan: the last, unpadded group went past the buffer).
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    std::string text = base64_encode(bytes);
    while (!text.empty() && text.back() == '=') text.pop_back();
    EXPECT_EQ(base64_decode(text), bytes) << text;
    bytes.push_back(static_cast<char>('a' + i % 26));
  }
  EXPECT_EQ(base64_decode("aGkalt/job/20261129000000000001").size(), 23u);
}

TEST(Base64, InvalidTextDecodesUpToTheFirstBadCharacter) {
  EXPECT_EQ(base64_decode("aGk=!!"), "hi");
  EXPECT_EQ(base64_decode("aGk!aGk="), "hi");
  EXPECT_EQ(base64_decode(""), "");
}

}  // namespace
}  // namespace salttap
