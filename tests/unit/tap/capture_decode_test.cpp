// Every real capture decodes to exactly the events Salt's own subscriber saw
// (<scenario>.jsonl), in order, whatever way the bytes are split into reads.

#include <gtest/gtest.h>

#include <random>

#include <rapidjson/document.h>
#include <rapidjson/writer.h>

#include "tap/capture_file.h"
#include "tap/event_to_json.h"
#include "tap/internal/stream_decoder.h"
#include "tests/support/captures.h"

namespace salttap::tap {
namespace {

using salttap::testing::capture_raw_files;
using salttap::testing::CaptureTestName;
using salttap::testing::read_file;

// Re-serialise Salt's JSON with the same writer salttap uses, so the compare
// is exact in values and key order but not in whitespace.
std::vector<std::string> expected_events(const std::filesystem::path& raw) {
  std::filesystem::path jsonl = raw;
  jsonl.replace_extension(".jsonl");
  std::ifstream in(jsonl);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    rapidjson::Document d;
    d.Parse<rapidjson::kParseFullPrecisionFlag | rapidjson::kParseNanAndInfFlag>(line.c_str());
    EXPECT_FALSE(d.HasParseError()) << jsonl;
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    d.Accept(w);
    out.emplace_back(sb.GetString(), sb.GetSize());
  }
  return out;
}

// Decodes `bytes` fed in pieces whose sizes come from `next_size`.
template <typename NextSize>
std::vector<std::string> decode_split(const std::string& bytes, NextSize next_size, FrameStats* stats = nullptr) {
  StreamDecoder decoder;
  std::vector<std::string> out;
  for (std::size_t off = 0; off < bytes.size();) {
    const std::size_t n = std::min(next_size(), bytes.size() - off);
    decoder.feed(std::string_view(bytes).substr(off, n), [&](Event&& e) {
      std::string s;
      append_event_json(s, e);
      out.push_back(std::move(s));
    });
    off += n;
  }
  decoder.finish();
  EXPECT_EQ(decoder.events().stats().total_errors(), 0u);
  if (stats) *stats = decoder.frames().stats();
  return out;
}

class CaptureDecode : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(CaptureDecode, WholeFileEqualsSaltsOwnDecoding) {
  const std::string bytes = read_file(GetParam());
  FrameStats stats;
  const auto events = decode_split(
      bytes, [&] { return bytes.size() + 1; }, &stats);
  EXPECT_EQ(events, expected_events(GetParam()));
  EXPECT_EQ(stats.skipped_bytes, 0u);
  EXPECT_EQ(stats.resyncs, 0u);
  EXPECT_EQ(stats.truncated_frames, 0u);
  if (!bytes.empty()) {
    const bool len32 = GetParam().parent_path().filename() == "salt-3006.26";
    // Re-detect per decoder: the framing must match the Salt release.
    FrameDecoder fd;
    fd.feed(bytes, [](std::string_view) {});
    EXPECT_EQ(fd.framing(), len32 ? Framing::len32 : Framing::plain);
  }
}

TEST_P(CaptureDecode, ByteAtATime) {
  const std::string bytes = read_file(GetParam());
  EXPECT_EQ(decode_split(bytes, [] { return std::size_t{1}; }), expected_events(GetParam()));
}

TEST_P(CaptureDecode, RandomSplits) {
  const std::string bytes = read_file(GetParam());
  const auto expected = expected_events(GetParam());
  std::mt19937 rng(42);
  for (int round = 0; round < 10; ++round) {
    std::uniform_int_distribution<std::size_t> size(1, round < 5 ? 64 : 70'000);
    EXPECT_EQ(decode_split(bytes, [&] { return size(rng); }), expected) << "round " << round;
  }
}

TEST_P(CaptureDecode, ReplayReadsFileAsTheSocketWould) {
  std::vector<std::string> out;
  CaptureStats stats;
  read_capture(
      GetParam().string(), {},
      [&](Event&& e) {
        std::string s;
        append_event_json(s, e);
        out.push_back(std::move(s));
      },
      stats);
  EXPECT_EQ(out, expected_events(GetParam()));
}

TEST_P(CaptureDecode, JsonLinesReplayEqualsRawReplay) {
  std::filesystem::path jsonl = GetParam();
  jsonl.replace_extension(".jsonl");
  std::vector<std::string> out;
  CaptureStats stats;
  read_capture(
      jsonl.string(), {},
      [&](Event&& e) {
        std::string s;
        append_event_json(s, e);
        out.push_back(std::move(s));
      },
      stats);
  EXPECT_EQ(stats.json_errors, 0u);
  EXPECT_EQ(out, expected_events(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(AllCaptures, CaptureDecode, ::testing::ValuesIn(capture_raw_files()), CaptureTestName());

TEST(Captures, ArePresent) {
  // A missing tests/captures must fail loudly, not pass with zero cases.
  EXPECT_GE(capture_raw_files().size(), 60u) << salttap::testing::captures_dir();
}

}  // namespace
}  // namespace salttap::tap
