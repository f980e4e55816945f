// Every msgpack variant of docs/salt-event-bus.md §4, and every failure.

#include <gtest/gtest.h>

#include <limits>

#include "tap/event_to_json.h"
#include "tap/internal/event_decoder.h"
#include "tests/support/msgpack_builders.h"

namespace salttap::tap {
namespace {

using namespace salttap::testing;

std::string json(const Event& e) {
  std::string s;
  append_event_json(s, e);
  return s;
}

TEST(EventDecoder, DecodesBinAndRawBodiesInEitherKeyOrder) {
  const std::string b = simple_body("salt/job/1/new");
  EventDecoder d;
  for (auto type : {BodyType::bin, BodyType::raw})
    for (bool body_first : {false, true}) {
      auto e = d.decode_frame(frame(b, type, body_first));
      ASSERT_TRUE(e);
      EXPECT_EQ(json(*e), R"({"tag":"salt/job/1/new","data":{"k":"v"}})");
    }
  EXPECT_EQ(d.stats().events, 4u);
}

TEST(EventDecoder, SplitsAtTheFirstSeparatorOnly) {
  msgpack::sbuffer data;
  Packer(data).pack(std::map<std::string, std::string>{{"a", "x\n\ny"}});
  EventDecoder d;
  auto e = d.decode_body("t\n\n" + str(data));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->tag(), "t");
  EXPECT_EQ(*e->string_field("a"), "x\n\ny");
}

TEST(EventDecoder, OldPaddedTagsWithoutSeparator) {
  msgpack::sbuffer data;
  Packer(data).pack(std::map<std::string, int>{{"a", 1}});
  const std::string body = "salt/job/x||||||||||" + str(data);  // 20 chars, then a map marker
  EventDecoder d;
  auto e = d.decode_body(body);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->tag(), "salt/job/x");
}

TEST(EventDecoder, NonStringKeysInvalidUtf8ExtTypesAndBigIntegers) {
  const std::string b = body("t", 8, [](Packer& pk) {
    pk.pack(1);  // int key
    pk.pack(std::string_view("int-key"));
    pk.pack_nil();  // nil key
    pk.pack(true);
    pk.pack(std::string_view("bad"));
    pk.pack(std::string_view("caf\xe9 \xff"));  // Python 2 raw bytes
    pk.pack(std::string_view("u64"));
    pk.pack(std::numeric_limits<std::uint64_t>::max());
    pk.pack(std::string_view("i64"));
    pk.pack(std::numeric_limits<std::int64_t>::min());
    pk.pack(std::string_view("when"));
    pk.pack_ext(24, 78);
    pk.pack_ext_body("20261129T19:04:50.452295", 24);
    pk.pack(std::string_view("const"));
    {
      msgpack::sbuffer c;
      Packer cp(c);
      cp.pack_array(2);
      cp.pack(std::string_view("OPTIONAL"));
      cp.pack(1);
      pk.pack_ext(c.size(), 79);
      pk.pack_ext_body(c.data(), static_cast<std::uint32_t>(c.size()));
    }
    pk.pack(std::string_view("blob"));
    pk.pack_bin(3);
    pk.pack_bin_body("\x00\x01\xff", 3);
  });
  EventDecoder d;
  auto e = d.decode_frame(frame(b));
  ASSERT_TRUE(e);
  EXPECT_EQ(json(*e),
            "{\"tag\":\"t\",\"data\":{\"1\":\"int-key\",\"null\":true,\"bad\":\"caf\xef\xbf\xbd \xef\xbf\xbd\","
            "\"u64\":18446744073709551615,\"i64\":-9223372036854775808,"
            "\"when\":\"2026-11-29T19:04:50.452295\",\"const\":{\"__salt_constant__\":[\"OPTIONAL\",1]},"
            "\"blob\":{\"__bytes_b64__\":\"AAH/\"}}}");
}

TEST(EventDecoder, FailuresAreReturnedAndCountedNeverThrown) {
  EventDecoder d;
  EXPECT_FALSE(d.decode_frame("\xc1"));
  EXPECT_FALSE(d.decode_frame("\x91\x01"));  // an array, not a map
  msgpack::sbuffer no_body;
  Packer(no_body).pack(std::map<std::string, int>{{"head", 1}});
  EXPECT_FALSE(d.decode_frame(str(no_body)));
  msgpack::sbuffer int_body;
  Packer(int_body).pack(std::map<std::string, int>{{"body", 1}});
  EXPECT_FALSE(d.decode_frame(str(int_body)));
  EXPECT_FALSE(d.decode_body("no separator here"));
  EXPECT_FALSE(d.decode_body("tag\n\n\xc1"));
  EXPECT_FALSE(d.decode_body("tag\n\n"));

  const auto& e = d.stats().errors;
  EXPECT_EQ(e[size_t(DecodeError::frame_not_msgpack)], 1u);
  EXPECT_EQ(e[size_t(DecodeError::frame_not_map)], 1u);
  EXPECT_EQ(e[size_t(DecodeError::no_body)], 1u);
  EXPECT_EQ(e[size_t(DecodeError::body_not_bytes)], 1u);
  EXPECT_EQ(e[size_t(DecodeError::no_separator)], 1u);
  EXPECT_EQ(e[size_t(DecodeError::data_not_msgpack)], 2u);
  EXPECT_EQ(d.stats().events, 0u);
  EXPECT_FALSE(d.last_error().empty());
}

TEST(EventDecoder, LimitsApplyToTheData) {
  DecodeLimits limits;
  limits.max_depth = 4;
  EventDecoder d(limits);
  EXPECT_FALSE(d.decode_body(std::string("t\n\n\x91\x91\x91\x91\x91\x91\x01", 10)));
  EXPECT_EQ(d.stats().errors[size_t(DecodeError::over_limit)], 1u);
}

TEST(EventDecoder, EventOutlivesTheInputBuffer) {
  EventDecoder d;
  std::optional<Event> e;
  {
    std::string f = frame(simple_body("salt/job/1/ret/m1", "value"));
    e = d.decode_frame(f);
    std::fill(f.begin(), f.end(), 'X');
  }
  ASSERT_TRUE(e);
  EXPECT_EQ(e->tag(), "salt/job/1/ret/m1");
  EXPECT_EQ(*e->string_field("k"), "value");
  Event moved = std::move(*e);
  EXPECT_EQ(*moved.string_field("k"), "value");
}

TEST(EventJson, NonFiniteFloatsBecomeNull) {
  const std::string b = body("t", 1, [](Packer& pk) {
    pk.pack(std::string_view("f"));
    pk.pack(std::numeric_limits<double>::quiet_NaN());
  });
  EventDecoder d;
  auto e = d.decode_body(b);
  ASSERT_TRUE(e);
  EXPECT_EQ(json(*e), R"({"tag":"t","data":{"f":null}})");
}

}  // namespace
}  // namespace salttap::tap
