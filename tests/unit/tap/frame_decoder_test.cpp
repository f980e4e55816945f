// Framing detection, resynchronisation, limits and truncation.

#include <gtest/gtest.h>

#include "tap/internal/frame_decoder.h"
#include "tap/internal/msgpack_scanner.h"
#include "tests/support/msgpack_builders.h"

namespace salttap::tap {
namespace {

using namespace salttap::testing;

std::vector<std::string> frames_of(FrameDecoder& d, std::string_view bytes, std::size_t piece = 0) {
  std::vector<std::string> out;
  const auto sink = [&](std::string_view f) { out.emplace_back(f); };
  if (piece == 0) {
    d.feed(bytes, sink);
  } else {
    for (std::size_t i = 0; i < bytes.size(); i += piece) d.feed(bytes.substr(i, piece), sink);
  }
  return out;
}

TEST(MsgpackScanner, FindsTheEndOfNestedObjects) {
  const std::string f = frame(simple_body("a/b"));
  MsgpackScanner s({}, 1 << 20);
  const ScanResult r = s.scan(f + "trailing");
  EXPECT_EQ(r.status, ScanStatus::complete);
  EXPECT_EQ(r.end, f.size());
}

TEST(MsgpackScanner, ResumesWhereItStopped) {
  const std::string f = frame(simple_body("a/b"));
  MsgpackScanner s({}, 1 << 20);
  for (std::size_t n = 1; n < f.size(); ++n)
    ASSERT_EQ(s.scan(std::string_view(f).substr(0, n)).status, ScanStatus::need_more);
  EXPECT_EQ(s.scan(f).status, ScanStatus::complete);
}

TEST(MsgpackScanner, RejectsReservedByteDepthAndHugeContainers) {
  MsgpackScanner reserved({}, 100);
  EXPECT_EQ(reserved.scan("\x91\xc1").status, ScanStatus::invalid);

  DecodeLimits shallow;
  shallow.max_depth = 3;
  MsgpackScanner deep(shallow, 100);
  EXPECT_EQ(deep.scan("\x91\x91\x91\x91\x01").status, ScanStatus::invalid);

  DecodeLimits few;
  few.max_container_items = 10;
  MsgpackScanner wide(few, 1 << 20);
  EXPECT_EQ(wide.scan(std::string("\xdd\x00\x00\x01\x00", 5)).status, ScanStatus::invalid);
}

TEST(MsgpackScanner, ReportsTooLargeFromTheFirstHeaderThatSaysSo) {
  MsgpackScanner s({}, 1000);
  // bin32 of 4 GiB - 1: known to be too large after reading 5 bytes.
  EXPECT_EQ(s.scan(std::string("\x81\xa4"
                               "body\xc6\xff\xff\xff\xff",
                               11))
                .status,
            ScanStatus::too_large);
}

TEST(FrameDecoder, DetectsPlainAndLen32PerConnection) {
  const std::string f = frame(simple_body("t/1"));
  FrameDecoder d;
  EXPECT_EQ(frames_of(d, f + f).size(), 2u);
  EXPECT_EQ(d.framing(), Framing::plain);
  d.finish();
  EXPECT_EQ(d.framing(), Framing::unknown);
  EXPECT_EQ(frames_of(d, len32(f) + len32(f)), (std::vector<std::string>{f, f}));
  EXPECT_EQ(d.framing(), Framing::len32);
  EXPECT_EQ(d.stats().skipped_bytes, 0u);
}

TEST(FrameDecoder, Python2BodyFirstRawFramesAreFrames) {
  const std::string f = frame(simple_body("t/1"), BodyType::raw, /*body_first=*/true);
  FrameDecoder d;
  EXPECT_EQ(frames_of(d, f + f, 3), (std::vector<std::string>{f, f}));
}

TEST(FrameDecoder, GarbageBetweenFramesIsSkippedAndCounted) {
  const std::string f = frame(simple_body("t/1"));
  const std::string garbage = "\x01\x02garbage\xc1\xff";
  for (const bool prefixed : {false, true}) {
    const std::string one = prefixed ? len32(f) : f;
    FrameDecoder d;
    const auto got = frames_of(d, one + garbage + one + garbage + garbage + one, 7);
    EXPECT_EQ(got, (std::vector<std::string>{f, f, f})) << prefixed;
    EXPECT_EQ(d.stats().skipped_bytes, 3 * garbage.size()) << prefixed;
    EXPECT_GE(d.stats().resyncs, 2u);
  }
}

TEST(FrameDecoder, GarbageBeforeTheFirstFrameStillFindsTheFraming) {
  const std::string f = frame(simple_body("t/1"));
  FrameDecoder plain;
  EXPECT_EQ(frames_of(plain, "zzz" + f + f).size(), 2u);
  EXPECT_EQ(plain.framing(), Framing::plain);
  FrameDecoder prefixed;
  EXPECT_EQ(frames_of(prefixed, "zzz" + len32(f) + len32(f)).size(), 2u);
  EXPECT_EQ(prefixed.framing(), Framing::len32);
}

TEST(FrameDecoder, OversizeFramesAreSkippedWithoutBufferingThem) {
  DecodeLimits limits;
  limits.max_frame_bytes = 4096;
  const std::string small = frame(simple_body("t/small"));
  const std::string big = frame(simple_body("t/big", std::string(100'000, 'x')));
  for (const bool prefixed : {false, true}) {
    auto wrap = [&](const std::string& x) { return prefixed ? len32(x) : x; };
    FrameDecoder d(limits);
    std::size_t max_buffered = 0;
    std::vector<std::string> got;
    const std::string stream = wrap(small) + wrap(big) + wrap(small);
    for (std::size_t i = 0; i < stream.size(); i += 1000) {
      d.feed(std::string_view(stream).substr(i, 1000), [&](std::string_view f) { got.emplace_back(f); });
      max_buffered = std::max(max_buffered, d.buffered());
    }
    EXPECT_EQ(got, (std::vector<std::string>{small, small})) << prefixed;
    EXPECT_EQ(d.stats().oversize_frames, 1u);
    EXPECT_EQ(d.stats().skipped_bytes, wrap(big).size());
    EXPECT_LT(max_buffered, 2 * limits.max_frame_bytes) << "an oversize frame must not be buffered";
  }
}

TEST(FrameDecoder, ATruncatedFrameAtEofIsCounted) {
  const std::string f = frame(simple_body("t/1"));
  FrameDecoder d;
  EXPECT_EQ(frames_of(d, f + f.substr(0, f.size() / 2)).size(), 1u);
  d.finish();
  EXPECT_EQ(d.stats().truncated_frames, 1u);
  EXPECT_EQ(d.stats().skipped_bytes, f.size() / 2);
  // And the decoder works again for the next connection.
  EXPECT_EQ(frames_of(d, len32(f)).size(), 1u);
}

TEST(FrameDecoder, ACorruptLengthPrefixResynchronises) {
  const std::string f = frame(simple_body("t/1"));
  std::string bad = len32(f);
  bad[4] = '\x01';  // the map marker is gone: this "frame" is not one
  FrameDecoder d;
  EXPECT_EQ(frames_of(d, len32(f) + bad + len32(f)).size(), 2u);
  EXPECT_GE(d.stats().invalid_frames, 1u);
}

TEST(FrameDecoder, AZeroMqGreetingIsNotMistakenForFrames) {
  FrameDecoder d;
  const std::string zmtp("\xff\x00\x00\x00\x00\x00\x00\x00\x01\x7f\x03\x00NULL", 16);
  EXPECT_TRUE(frames_of(d, zmtp).empty());
  EXPECT_EQ(d.framing(), Framing::unknown);
}

}  // namespace
}  // namespace salttap::tap
