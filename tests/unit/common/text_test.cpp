// Small text utilities (common/text.h) and the UTC format of common/clock.h.

#include <fnmatch.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/clock.h"
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

TEST(GlobMatch, AgreesWithFnmatch) {
  // `*` and `?` are matched without fnmatch; the answers must be fnmatch's.
  const std::vector<std::string> patterns = {"*",
                                             "",
                                             "salt/job/*/new",
                                             "salt/job/*/ret/*",
                                             "salt/job/*/prog/*",
                                             "salt/auth",
                                             "salt/*",
                                             "*/ret/*",
                                             "state.*",
                                             "test.ping",
                                             "minion-?",
                                             "*-b",
                                             "a*b*c",
                                             "a**b",
                                             "?",
                                             "??",
                                             "*?",
                                             "[ab]*",
                                             "salt/\\*",
                                             "*x*x*"};
  const std::vector<std::string> texts = {"",
                                          "salt/job/20261203150000000000/new",
                                          "salt/job/1/ret/minion-a",
                                          "salt/job/1/prog/minion-a/0",
                                          "salt/job//ret/",
                                          "salt/auth",
                                          "salt/authx",
                                          "state.apply",
                                          "state",
                                          "test.ping",
                                          "minion-a",
                                          "minion-ab",
                                          "a-b",
                                          "axbyc",
                                          "ab",
                                          "abc",
                                          "x",
                                          "xx",
                                          "salt/*",
                                          "xaxbx",
                                          "b/c/ret/d"};
  for (const auto& p : patterns)
    for (const auto& t : texts)
      EXPECT_EQ(glob_match(p, t), ::fnmatch(p.c_str(), t.c_str(), 0) == 0) << "pattern " << p << " text " << t;
}

TEST(FormatUtc, MicrosecondsSinceTheEpoch) {
  EXPECT_EQ(format_utc(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(format_utc(1764444290452295), "2025-11-29T19:24:50.452295Z");
  EXPECT_EQ(format_utc(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(format_utc(253402300799999999), "9999-12-31T23:59:59.999999Z");
  for (const char* stamp : {"2026-11-29T19:04:50.452295", "2024-02-29T00:00:00.000001", "2000-03-01T12:34:56.789000"}) {
    const auto t = parse_salt_stamp(stamp);
    ASSERT_TRUE(t.has_value()) << stamp;
    EXPECT_EQ(format_utc(*t), std::string(stamp) + "Z");
  }
}

}  // namespace
}  // namespace salttap
