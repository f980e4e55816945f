// JSON lines to msgpack and event bodies (tap/event_from_json.h): every value comes
// out as itself, and what cannot be read back faithfully is refused.

#include <gtest/gtest.h>

#include <cmath>

#include <msgpack.hpp>

#include "tap/event_from_json.h"
#include "tap/internal/event_decoder.h"

namespace salttap::tap {
namespace {

std::string packed(std::string_view json) {
  std::string error;
  const auto bytes = msgpack_from_json(json, &error);
  EXPECT_TRUE(bytes.has_value()) << json << ": " << error;
  return bytes.value_or("");
}

std::string refused(std::string_view json, bool event = false) {
  std::string error;
  const auto bytes = event ? event_body_from_json(json, &error) : msgpack_from_json(json, &error);
  EXPECT_FALSE(bytes.has_value()) << json;
  return error;
}

TEST(JsonEvent, FloatsStayFloatsEvenWhenIntegral) {
  // Regression: corpus/event_from_json/edge-numbers-integral-floats. msgpack-c packs an
  // integral double as an integer (1.0 -> 1, -0.0 -> 0), 2^64 through an overflowing cast.
  const std::string f64 = "\xcb";
  EXPECT_EQ(packed("1.0"), f64 + std::string("\x3f\xf0\x00\x00\x00\x00\x00\x00", 8));
  EXPECT_EQ(packed("-0.0"), f64 + std::string("\x80\x00\x00\x00\x00\x00\x00\x00", 8));
  EXPECT_EQ(packed("18446744073709551616"), f64 + std::string("\x43\xf0\x00\x00\x00\x00\x00\x00", 8));
  EXPECT_EQ(packed("1"), "\x01");
  EXPECT_EQ(packed("-0"), std::string(1, '\0'));
  EXPECT_EQ(packed("18446744073709551615"), "\xcf\xff\xff\xff\xff\xff\xff\xff\xff");
  EXPECT_EQ(packed("-9223372036854775808"), std::string("\xd3\x80\x00\x00\x00\x00\x00\x00\x00", 9));
}

double number(std::string_view json) {
  const std::string bytes = packed(json);
  const msgpack::object_handle h = msgpack::unpack(bytes.data(), bytes.size());
  EXPECT_EQ(h.get().type, msgpack::type::FLOAT64) << json;
  return h.get().via.f64;
}

TEST(JsonEvent, NumbersAreCorrectlyRounded) {
  // Regression: corpus/event_from_json/crash-full-precision-zero-with-exponent. rapidjson
  // 1.1.0's full-precision parser read these zeros as -2e146 and -1.4e-194.
  EXPECT_EQ(number("0e100"), 0.0);
  EXPECT_EQ(number("0.0000000000000000000000000"), 0.0);
  EXPECT_EQ(number("0.184467440737095516159"), 0.18446744073709551);
  EXPECT_EQ(number("2.2250738585072011e-308"), 2.2250738585072009e-308);
  EXPECT_EQ(number("5e-324"), 4.9406564584124654e-324);
  EXPECT_EQ(number("0.1"), 0.1);
  EXPECT_EQ(number("123456789012345678901234567890"), 1.2345678901234568e29);
  EXPECT_TRUE(std::isnan(number("NaN")));
  EXPECT_EQ(number("-Infinity"), -HUGE_VAL);
  // What a double cannot hold is refused, not rounded to 0 or infinity.
  EXPECT_NE(refused("[1e-400]").find("number out of the range of a double: 1e-400"), std::string::npos);
  EXPECT_NE(refused("1.7976931348623159e308").find("out of the range"), std::string::npos);
  // Regression: corpus/event_from_json/crash-nan-prefix-taken-for-infinity.
  EXPECT_NE(refused(R"({"x":NaInfinity})").find("invalid number: NaInfinity"), std::string::npos);
  EXPECT_NE(refused("[NInf]").find("invalid number: NInf"), std::string::npos);
}

TEST(JsonEvent, OnlyBase64BecomesBytes) {
  EXPECT_EQ(packed(R"({"__bytes_b64__":"AAH/"})"), std::string("\xc4\x03\x00\x01\xff", 5));
  EXPECT_EQ(packed(R"({"__bytes_b64__":""})"), std::string("\xc4\x00", 2));
  // Regression: corpus/event_from_json/edge-b64-*. These became the bytes of whatever prefix decoded.
  for (const char* text : {"not base64!", "aGk", "aGl=", "aG k=", "-_-_"}) {
    const std::string bytes = packed(std::string(R"({"__bytes_b64__":")") + text + "\"}");
    const msgpack::object_handle h = msgpack::unpack(bytes.data(), bytes.size());
    ASSERT_EQ(h.get().type, msgpack::type::MAP) << text;
    EXPECT_EQ(h.get().via.map.ptr[0].val.as<std::string>(), text);
  }
}

TEST(JsonEvent, ATagTheSeparatorWouldCutIsRefused) {
  // Regression: corpus/event_from_json/edge-tag-with-separator ("a\n\nb" came back as tag "a").
  EXPECT_NE(refused(R"({"tag":"salt/job/1\n\nx","data":{}})", true).find("tag"), std::string::npos);
  EXPECT_NE(refused(R"({"tag":"salt/job/1\n","data":{}})", true).find("tag"), std::string::npos);
  std::string error;
  const auto body = event_body_from_json(R"({"tag":"a\nb","data":1})", &error);
  ASSERT_TRUE(body.has_value()) << error;
  EventDecoder d;
  const auto e = d.decode_body(*body);
  ASSERT_TRUE(e.has_value()) << d.last_error();
  EXPECT_EQ(e->tag(), "a\nb");
}

TEST(JsonEvent, DeepNestingIsRefusedWithoutRecursion) {
  // Regression: corpus/event_from_json/edge-deep-arrays-200000 (the parser overflowed the stack).
  const auto nested = [](std::size_t n) { return std::string(n, '[') + std::string(n, ']'); };
  EXPECT_FALSE(packed(nested(1024)).empty());
  EXPECT_NE(refused(nested(1025)).find("deeper than 1024"), std::string::npos);
  EXPECT_NE(refused(nested(200000)).find("deeper than 1024"), std::string::npos);
  EXPECT_NE(refused(R"({"tag":"t","data":)" + nested(200000) + "}", true).find("deeper"), std::string::npos);
}

}  // namespace
}  // namespace salttap::tap
