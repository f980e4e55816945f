// The transcoder (msgpack bytes -> JSON, no tree) against the renderer it
// replaces for `replay --output events` (Event -> append_event_json): the
// same bytes out for every frame of every capture and of make_stream.py's
// streams, the same outcome and error counts on every corruption of them,
// and every msgpack form the renderer handles specially.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/json_escape.h"
#include "common/text.h"
#include "tap/capture_file.h"
#include "tap/event_to_json.h"
#include "tap/internal/event_decoder.h"
#include "tap/internal/json_transcoder.h"
#include "tap/internal/stream_decoder.h"
#include "tap/internal/stream_transcoder.h"
#include "tests/support/captures.h"
#include "tests/support/msgpack_builders.h"

namespace salttap::tap {
namespace {

using namespace salttap::testing;

struct Decoded {
  std::string lines;
  DecodeStats stats;
  FrameStats frames;
};

// The renderer's output: Events, then append_event_json, one line each.
Decoded through_events(std::string_view bytes, const DecodeLimits& limits, std::size_t piece) {
  StreamDecoder decoder(limits);
  Decoded d;
  for (std::size_t off = 0; off < bytes.size(); off += piece)
    decoder.feed(bytes.substr(off, piece), [&](Event&& e) {
      append_event_json(d.lines, e);
      d.lines.push_back('\n');
    });
  decoder.finish();
  d.stats = decoder.events().stats();
  d.frames = decoder.frames().stats();
  return d;
}

Decoded through_transcoder(std::string_view bytes, const DecodeLimits& limits, std::size_t piece) {
  StreamTranscoder transcoder(limits);
  Decoded d;
  for (std::size_t off = 0; off < bytes.size(); off += piece) transcoder.feed(bytes.substr(off, piece), d.lines);
  transcoder.finish();
  d.stats = transcoder.events().stats();
  d.frames = transcoder.frames().stats();
  return d;
}

void expect_same_stream(std::string_view bytes, const DecodeLimits& limits, std::size_t piece,
                        const std::string& what) {
  const Decoded old_way = through_events(bytes, limits, piece);
  const Decoded new_way = through_transcoder(bytes, limits, piece);
  EXPECT_EQ(old_way.stats.events, new_way.stats.events) << what;
  EXPECT_EQ(old_way.stats.errors, new_way.stats.errors) << what;
  EXPECT_EQ(old_way.frames.frames, new_way.frames.frames) << what;
  EXPECT_EQ(old_way.frames.skipped_bytes, new_way.frames.skipped_bytes) << what;
  ASSERT_EQ(old_way.lines.size(), new_way.lines.size()) << what;
  // Line by line, so a failure names the first event that differs.
  std::size_t at = 0;
  while (at < old_way.lines.size()) {
    const std::size_t end = old_way.lines.find('\n', at);
    const std::string_view a = std::string_view(old_way.lines).substr(at, end - at + 1);
    const std::string_view b = std::string_view(new_way.lines).substr(at, end - at + 1);
    ASSERT_EQ(a, b) << what << " at byte " << at;
    at = end + 1;
  }
}

// One frame through both paths of one EventDecoder each: same outcome, same
// error text and counts, same JSON.
void expect_same_frame(std::string_view frame, const DecodeLimits& limits, bool as_body = false) {
  EventDecoder old_decoder(limits), new_decoder(limits);
  const auto event = as_body ? old_decoder.decode_body(frame) : old_decoder.decode_frame(frame);
  std::string got = "prefix";
  const bool ok = as_body ? new_decoder.transcode_body(frame, got) : new_decoder.transcode_frame(frame, got);
  ASSERT_EQ(event.has_value(), ok) << old_decoder.last_error() << " / " << new_decoder.last_error();
  EXPECT_EQ(old_decoder.stats().errors, new_decoder.stats().errors);
  EXPECT_EQ(old_decoder.stats().events, new_decoder.stats().events);
  if (!ok) {
    EXPECT_EQ(old_decoder.last_error(), new_decoder.last_error());
    EXPECT_EQ(got, "prefix");  // nothing of a failed event is left in the output
    return;
  }
  std::string want = "prefix";
  append_event_json(want, *event);
  EXPECT_EQ(want, got);
}

std::string frames_of(const std::filesystem::path& raw) { return read_file(raw); }

// The events read_capture hands out, rendered as the JSON lines the
// transcoder must write.
std::string rendered(const std::filesystem::path& capture, CaptureStats& stats) {
  std::string lines;
  read_capture(
      capture.string(), {},
      [&](Event&& e) {
        append_event_json(lines, e);
        lines.push_back('\n');
      },
      stats);
  return lines;
}

class TranscodeCapture : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(TranscodeCapture, EveryFrameAsTheRendererWritesIt) {
  const std::string bytes = frames_of(GetParam());
  expect_same_stream(bytes, {}, bytes.size() + 1, GetParam().string());
  expect_same_stream(bytes, {}, 4096, GetParam().string() + " in 4 KiB reads");
}

TEST_P(TranscodeCapture, TheSameOutcomeOnEveryCorruption) {
  // Each frame, cut short at several points and with bytes flipped: the
  // transcoder fails where the decoder fails, with the same error, and
  // renders the same when both succeed.
  std::vector<std::string> frames;
  FrameDecoder fd;
  fd.feed(frames_of(GetParam()), [&](std::string_view f) { frames.emplace_back(f); });
  std::mt19937 rng(7);
  DecodeLimits tiny;
  tiny.max_container_items = 6;
  tiny.max_depth = 3;
  for (const std::string& f : frames) {
    expect_same_frame(f, {});
    expect_same_frame(f, tiny);
    for (std::size_t cut : {f.size() / 3, f.size() / 2, f.size() - 1}) expect_same_frame(f.substr(0, cut), {});
    for (int i = 0; i < 8; ++i) {
      std::string mutated = f;
      mutated[rng() % mutated.size()] = static_cast<char>(rng());
      expect_same_frame(mutated, {});
    }
  }
}

TEST_P(TranscodeCapture, JsonLinesCapturesToo) {
  std::filesystem::path jsonl = GetParam();
  jsonl.replace_extension(".jsonl");
  CaptureStats old_stats;
  const std::string want = rendered(jsonl, old_stats);
  std::string got;
  CaptureStats new_stats;
  transcode_capture(
      jsonl.string(), {}, [&](std::string_view lines) { got.append(lines); }, new_stats, 1000);
  EXPECT_EQ(want, got);
  EXPECT_EQ(old_stats.events, new_stats.events);
  EXPECT_EQ(old_stats.json_lines, new_stats.json_lines);
  EXPECT_EQ(old_stats.json_errors, new_stats.json_errors);
}

INSTANTIATE_TEST_SUITE_P(AllCaptures, TranscodeCapture, ::testing::ValuesIn(capture_raw_files()), CaptureTestName());

TEST(TranscodeCapture, ReadsTheFileInChunksAndCountsAsReadCapture) {
  // The largest capture (1.7 MB, two file reads) through the file path: the
  // lines handed over after each read once past the chunk size, the same
  // lines and counts as read_capture.
  const auto raw = captures_dir() / "salt-3006.25" / "large_return.raw";
  CaptureStats old_stats;
  const std::string want = rendered(raw, old_stats);
  std::string got;
  std::size_t writes = 0;
  CaptureStats new_stats;
  transcode_capture(
      raw.string(), {},
      [&](std::string_view lines) {
        ++writes;
        got.append(lines);
      },
      new_stats, 512);
  EXPECT_EQ(want, got);
  EXPECT_GT(writes, 1u);
  EXPECT_EQ(old_stats.events, new_stats.events);
  EXPECT_GT(new_stats.events, 0u);
}

// make_stream.py's streams (the benchmark's input): made by the ctest
// fixture make-transcode-streams with Salt's virtualenv.
TEST(TranscodeStream, MakeStreamOutputAsTheRendererWritesIt) {
  const std::filesystem::path dir = SALTTAP_TRANSCODE_STREAMS_DIR;
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(dir))
    for (const auto& f : std::filesystem::directory_iterator(dir))
      if (f.path().extension() == ".raw") files.push_back(f.path());
  ASSERT_EQ(files.size(), 4u) << "streams in " << dir
                              << ": the ctest fixture make-transcode-streams makes them with Salt 3006.25's virtualenv";
  for (const auto& f : files) {
    const std::string bytes = read_file(f);
    expect_same_stream(bytes, {}, std::size_t{1} << 20, f.string());
  }
}

// --- every special form, hand-built ---

std::string event_body(const std::function<void(Packer&)>& value) {
  msgpack::sbuffer b;
  b.write("some/tag\n\n", 10);
  Packer pk(b);
  value(pk);
  return str(b);
}

void expect_same_body(const std::function<void(Packer&)>& value) {
  const std::string body = event_body(value);
  expect_same_frame(body, {}, true);
  expect_same_frame(frame(body), {});
}

void pack_ext(Packer& pk, std::int8_t type, std::string_view payload) {
  pk.pack_ext(payload.size(), type);
  pk.pack_ext_body(payload.data(), static_cast<std::uint32_t>(payload.size()));
}

std::string packed(const std::function<void(Packer&)>& value) {
  msgpack::sbuffer b;
  Packer pk(b);
  value(pk);
  return str(b);
}

TEST(Transcoder, ScalarsAndFloats) {
  for (double d : {0.0, -0.0, 1.0, 1.5, -2.25, 1e21, 1e-7, 123456789.125, 0.1, 1e308, 5e-324,
                   std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity()})
    expect_same_body([&](Packer& pk) {
      pk.pack_array(2);
      pk.pack_double(d);
      pk.pack_float(static_cast<float>(d));
    });
  expect_same_body([](Packer& pk) {
    pk.pack_array(8);
    pk.pack_nil();
    pk.pack_true();
    pk.pack_false();
    pk.pack(std::numeric_limits<std::uint64_t>::max());
    pk.pack(std::numeric_limits<std::int64_t>::min());
    pk.pack(-1);
    pk.pack(-33);
    pk.pack(std::int8_t{5});
  });
}

TEST(Transcoder, StringsEscapedAndInvalidUtf8Replaced) {
  std::string every_byte;
  for (int c = 0; c < 256; ++c) every_byte.push_back(static_cast<char>(c));
  for (std::string s : {std::string("plain"), std::string("quote \" back \\ slash / tab\t nl\n"),
                        std::string("\x01\x1f\x7f", 3), std::string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
                        std::string("bad \xff\xfe tail"), std::string("cut \xe2\x82"), std::string("\xed\xa0\x80"),
                        std::string("nul\0inside", 10), every_byte, std::string(100, 'x') + "\"" + std::string(9, 'y')})
    expect_same_body([&](Packer& pk) {
      pk.pack_map(2);
      pk.pack(s);
      pk.pack(s);
      pk.pack(std::string_view("bin"));
      pk.pack_bin(static_cast<std::uint32_t>(s.size()));
      pk.pack_bin_body(s.data(), static_cast<std::uint32_t>(s.size()));
    });
}

TEST(Transcoder, NonStringKeys) {
  expect_same_body([](Packer& pk) {
    pk.pack_map(14);
    pk.pack_nil(), pk.pack(1);
    pk.pack_true(), pk.pack(2);
    pk.pack_false(), pk.pack(3);
    pk.pack(42), pk.pack(4);
    pk.pack(-42), pk.pack(5);
    pk.pack_double(2.5), pk.pack(6);
    pk.pack_double(std::nan("")), pk.pack(7);
    pk.pack_bin(3), pk.pack_bin_body("abc", 3), pk.pack(8);
    pk.pack_bin(2), pk.pack_bin_body("\xff\x01", 2), pk.pack(9);
    pk.pack_array(1), pk.pack(1), pk.pack(10);
    pk.pack_map(1), pk.pack_nil(), pk.pack_map(1), pk.pack(1), pk.pack(2), pk.pack(11);
    pack_ext(pk, 5, "x"), pk.pack(12);
    pk.pack(std::string_view("bad\xff")), pk.pack(13);
    pk.pack_float(0.5F), pk.pack(14);
  });
}

TEST(Transcoder, SaltExtTypes) {
  const std::string constant = packed([](Packer& pk) {
    pk.pack_array(2);
    pk.pack(std::string_view("STATE_RET"));
    pk.pack(1);
  });
  const std::string nested = packed([&](Packer& pk) { pack_ext(pk, 79, constant); });
  for (const std::string& payload :
       {std::string("20261201T08:00:00.123456"), std::string("20261201T08:00"), std::string("short"),
        std::string("20261201X08:00:00.123456"), std::string("2026120\xffT08:00:00.1")})
    expect_same_body([&](Packer& pk) { pack_ext(pk, 78, payload); });
  expect_same_body([&](Packer& pk) {
    pk.pack_array(6);
    pack_ext(pk, 79, constant);
    pack_ext(pk, 79, nested);
    pack_ext(pk, 79, "\xc1");         // not msgpack: the generic form
    pack_ext(pk, 79, "");             // nothing to unpack
    pack_ext(pk, 1, "\x01\x02\x03");  // another type
    pack_ext(pk, -5, std::string(16, 'z'));
  });
  // Constants nested past the renderer's depth limit of 8.
  std::string deep = constant;
  for (int i = 0; i < 12; ++i) deep = packed([&](Packer& pk) { pack_ext(pk, 79, deep); });
  expect_same_body([&](Packer& pk) { pack_ext(pk, 79, deep); });
}

TEST(Transcoder, LimitsAndBadInputFailAsTheDecoderDoes) {
  DecodeLimits tiny;
  tiny.max_container_items = 2;
  tiny.max_depth = 2;
  for (const std::string& data :
       {packed([](Packer& pk) { pk.pack_array(3), pk.pack(1), pk.pack(2), pk.pack(3); }),
        packed([](Packer& pk) { pk.pack_array(1), pk.pack_array(1), pk.pack_array(1), pk.pack(1); }),
        packed([](Packer& pk) { pk.pack_map(1), pk.pack_array(1), pk.pack_array(1), pk.pack(1), pk.pack(2); }),
        std::string("\x92\x01\xc1", 3), std::string("\x92\x01", 2), std::string("\xdd\xff\xff\xff\xff"),
        std::string("\xdb\x00\x00\x00\x09"
                    "abc",
                    8),
        std::string("\xc7\x05\x4f\x01"), std::string(), std::string("\x81\xa1k\x81\xa1k\x81\xa1k\x01")}) {
    for (const DecodeLimits& limits : {DecodeLimits{}, tiny}) {
      expect_same_frame("t\n\n" + data, limits, true);
      expect_same_frame(frame("t\n\n" + data), limits);
      std::string out = "kept";
      const TreeResult r = transcode_msgpack_json(data, 0, limits, out);
      msgpack::zone zone;
      msgpack::object o;
      const TreeResult t = build_tree(zone, data, 0, limits, o);
      EXPECT_EQ(r.status, t.status);
      EXPECT_EQ(r.end, t.end);
      if (r.status != TreeStatus::ok) {
        EXPECT_EQ(out, "kept");
      }
    }
  }
  // Frames that fail before the data: the same errors and texts.
  expect_same_frame("\xc1", {});
  expect_same_frame("\x01", {});
  expect_same_frame(packed([](Packer& pk) { pk.pack_map(0); }), {});
  expect_same_frame(packed([](Packer& pk) { pk.pack_map(1), pk.pack(std::string_view("body")), pk.pack(1); }), {});
  expect_same_frame(frame("no separator"), {});
  expect_same_frame(frame("salt/job/x||||||||||\x81\xa1k\x01"), {});  // pre-2015.5 padded tag
}

TEST(JsonEscape, EveryByteAsRapidJsonWritesIt) {
  std::mt19937 rng(3);
  std::vector<std::string> cases;
  for (int c = 0; c < 256; ++c) cases.emplace_back(1, static_cast<char>(c));
  // Long and escape-dense strings too: every path of the 16- and 8-byte
  // loops, and the output growing past its first estimate.
  cases.emplace_back(10000, '\x01');
  cases.push_back(std::string(5000, '"') + std::string(5000, 'a') + std::string(70, '\n'));
  for (int i = 0; i < 3000; ++i) {
    std::string s(rng() % (i < 1500 ? 40 : 400), ' ');
    for (char& c : s) c = static_cast<char>(rng() % 3 == 0 ? rng() % 40 : 32 + rng() % 96);
    cases.push_back(s);
  }
  // The first escape at every position of a short and a long string (none
  // where at == len): the clean prefix is copied at once, the rest escaped.
  for (const std::size_t len : {std::size_t{47}, std::size_t{300}})
    for (std::size_t at = 0; at <= len; ++at) {
      std::string s(len, 'a');
      if (at < len) s[at] = '"';
      if (at + 20 < len) s[at + 20] = '\n';
      cases.push_back(s);
    }
  for (const std::string& s : cases) {
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    std::string ours;
    json::append_string(ours, s);
    ASSERT_EQ(std::string(sb.GetString(), sb.GetSize()), ours);
  }
}

TEST(JsonEscape, InvalidUtf8IsReplacedWhereverItIsBeforeOrAfterTheFirstEscape) {
  // append_text learns of bytes >= 0x80 from the escaping pass, whether they
  // are in the clean prefix, in the escaped rest, or in a string with no escape.
  for (const std::size_t len : {std::size_t{5}, std::size_t{40}, std::size_t{200}})
    for (std::size_t bad = 0; bad < len; bad += 3)
      for (const std::size_t quote : {len, bad / 2, bad + 1, len - 1}) {
        std::string s(len, 'x');
        s[bad] = '\xff';
        if (quote < len && quote != bad) s[quote] = '"';
        std::string fixed;
        append_utf8_replacing(fixed, s);
        rapidjson::StringBuffer sb;
        rapidjson::Writer<rapidjson::StringBuffer> w(sb);
        w.String(fixed.data(), static_cast<rapidjson::SizeType>(fixed.size()));
        std::string ours;
        json::append_text(ours, s);
        ASSERT_EQ(std::string(sb.GetString(), sb.GetSize()), ours)
            << "len " << len << " bad " << bad << " quote " << quote;
      }
}

}  // namespace
}  // namespace salttap::tap
