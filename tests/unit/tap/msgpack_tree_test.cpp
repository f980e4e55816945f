// build_tree must build exactly what msgpack::unpack builds.

#include <gtest/gtest.h>

#include <limits>

#include "tap/internal/frame_decoder.h"
#include "tap/msgpack_tree.h"
#include "tests/support/captures.h"
#include "tests/support/msgpack_builders.h"

namespace salttap::tap {
namespace {

using namespace salttap::testing;

void expect_same_tree(std::string_view bytes, std::size_t offset = 0) {
  msgpack::zone zone;
  msgpack::object ours;
  const TreeResult r = build_tree(zone, bytes, offset, {}, ours);
  ASSERT_EQ(r.status, TreeStatus::ok);
  std::size_t off = offset;
  msgpack::object_handle theirs = msgpack::unpack(bytes.data(), bytes.size(), off);
  EXPECT_EQ(r.end, off);
  EXPECT_TRUE(ours == theirs.get());
}

TEST(MsgpackTree, EqualsMsgpackUnpackOnEveryCapturedFrameAndBody) {
  std::size_t frames = 0;
  for (const auto& raw : capture_raw_files()) {
    FrameDecoder d;
    d.feed(read_file(raw), [&](std::string_view frame) {
      ++frames;
      expect_same_tree(frame);
      msgpack::object_handle outer = msgpack::unpack(frame.data(), frame.size());
      for (std::uint32_t i = 0; i < outer->via.map.size; ++i) {
        const auto& kv = outer->via.map.ptr[i];
        if (std::string_view(kv.key.via.str.ptr, kv.key.via.str.size) != "body") continue;
        const std::string_view body(kv.val.via.bin.ptr, kv.val.via.bin.size);
        expect_same_tree(body, body.find("\n\n") + 2);
      }
    });
  }
  EXPECT_GT(frames, 600u);
}

TEST(MsgpackTree, EveryScalarType) {
  msgpack::sbuffer b;
  Packer pk(b);
  pk.pack_array(18);
  pk.pack_nil();
  pk.pack(true);
  pk.pack(false);
  pk.pack(5);
  pk.pack(-5);
  pk.pack(std::int8_t{-100});
  pk.pack(std::int16_t{-30000});
  pk.pack(std::int32_t{-2000000000});
  pk.pack(std::numeric_limits<std::int64_t>::min());
  pk.pack(std::uint8_t{200});
  pk.pack(std::uint16_t{60000});
  pk.pack(std::uint32_t{4000000000u});
  pk.pack(std::numeric_limits<std::uint64_t>::max());
  pk.pack(1.5f);
  pk.pack(2.25);
  pk.pack(std::string(300, 's'));
  pk.pack_ext(1, 5);
  pk.pack_ext_body("x", 1);
  pk.pack_ext(100, 78);
  pk.pack_ext_body(std::string(100, 'e').data(), 100);
  expect_same_tree(str(b));
}

TEST(MsgpackTree, TruncatedInvalidAndOverLimit) {
  msgpack::zone zone;
  msgpack::object o;
  EXPECT_EQ(build_tree(zone, "\x92\x01", 0, {}, o).status, TreeStatus::truncated);
  EXPECT_EQ(build_tree(zone,
                       "\xc4\x05"
                       "ab",
                       0, {}, o)
                .status,
            TreeStatus::truncated);
  EXPECT_EQ(build_tree(zone, std::string_view("\xcb\x00", 2), 0, {}, o).status, TreeStatus::truncated);
  EXPECT_EQ(build_tree(zone, "\x91\xc1", 0, {}, o).status, TreeStatus::invalid);
  DecodeLimits limits;
  limits.max_depth = 2;
  EXPECT_EQ(build_tree(zone, "\x91\x91\x91\x01", 0, limits, o).status, TreeStatus::over_limit);
  limits.max_container_items = 3;
  EXPECT_EQ(build_tree(zone, "\x94\x01\x01\x01\x01", 0, limits, o).status, TreeStatus::over_limit);
  EXPECT_EQ(build_tree(zone, "", 0, {}, o).status, TreeStatus::truncated);
}

}  // namespace
}  // namespace salttap::tap
