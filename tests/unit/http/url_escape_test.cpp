// escape_path_segment: what a document id becomes in an engine path.

#include <gtest/gtest.h>

#include <string>

#include "http/url_escape.h"

namespace salttap::http {
namespace {

TEST(EscapePathSegment, KeepsTheUnreservedBytesAndEscapesEveryOther) {
  EXPECT_EQ(escape_path_segment("Az09-._~"), "Az09-._~");
  EXPECT_EQ(escape_path_segment("f1/job/20261206041500123456"), "f1%2Fjob%2F20261206041500123456");
  EXPECT_EQ(escape_path_segment("a b?c#d%e+f"), "a%20b%3Fc%23d%25e%2Bf");
  EXPECT_EQ(escape_path_segment(std::string("\0\xff", 2)), "%00%FF");
  EXPECT_EQ(escape_path_segment("é"), "%C3%A9");
  EXPECT_EQ(escape_path_segment(""), "");
}

}  // namespace
}  // namespace salttap::http
