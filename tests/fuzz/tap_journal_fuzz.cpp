// libFuzzer target: the tap journal's reader (docs/tap-journal.md) over
// arbitrary segment files a previous run could have left. The input becomes
// one or two segments:
//
//   [0]    flags: bit 0 second segment; bit 1 fix the records' CRCs (so
//          mutations reach past the CRC checks: odd kinds, lengths, payloads
//          that are not frames); bit 2 append a frame after opening
//   [1..2] first segment length (big-endian)
//   [3..]  first segment, second segment (the rest)
//
// A TapJournal is opened on them and drained through the consumer's decode
// (EventDecoder, as EventQueue does). Contract: construction throws nothing;
// the drain ends; every record handed over parses again and comes from the
// input; bytes drained and skipped account for every byte; after the drain
// the journal finishes empty, with no segment file left.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "common/log.h"
#include "tap/internal/event_decoder.h"
#include "tap/internal/journal_format.h"
#include "tap/tap_journal.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

namespace fs = std::filesystem;
namespace jf = salttap::tap::journal_format;
using salttap::tap::JournalRecordKind;
using salttap::tap::TapJournal;

constexpr std::string_view kDirPrefix = "salttap-journal-fuzz-";
constexpr std::size_t kHeader = 3;
constexpr std::uint64_t kMaxRecord = 1u << 20;

const fs::path& journal_dir() {
  static const salttap::fuzz::ProcessScratchDir tmp(kDirPrefix);
  static const fs::path path = [] {
    salttap::log::set_level(salttap::log::Level::error);  // corrupt records WARN on most inputs
    return tmp.path() / "journal";
  }();
  return path;
}

void put_be32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) p[i] = static_cast<std::uint8_t>(v);
}

std::uint32_t get_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// Gives every header with the magic and a length that fits the CRC its bytes
// need, left to right, stepping over each record it fixed.
void fix_record_crcs(std::uint8_t* p, std::size_t n) {
  for (std::size_t at = 0; at + jf::kHeaderBytes <= n;) {
    const std::uint32_t len = get_be32(p + at + 4);
    if (get_be32(p + at) != jf::kRecordMagic || len > n - at - jf::kHeaderBytes) {
      ++at;
      continue;
    }
    jf::Crc32c crc;
    crc.process_bytes(p + at + 4, 8);
    crc.process_bytes(p + at + jf::kHeaderBytes, len);
    put_be32(p + at + 12, crc.checksum());
    at += jf::kHeaderBytes + len;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeader) return 0;
  const fs::path& dir = journal_dir();
  salttap::fuzz::empty_dir(dir);

  const std::uint8_t flags = data[0];
  salttap::fuzz::InputSlices pieces(data, size, kHeader);
  const auto [seg1, seg1_len] = pieces.next((std::size_t{data[1]} << 8) | data[2]);
  const auto [seg2, seg2_len] = pieces.next(pieces.left());
  if (flags & 2) {
    fix_record_crcs(seg1, seg1_len);
    fix_record_crcs(seg2, seg2_len);
  }
  salttap::fuzz::write_input_file(dir / jf::segment_file_name(1), seg1, seg1_len);
  if (flags & 1) salttap::fuzz::write_input_file(dir / jf::segment_file_name(2), seg2, seg2_len);
  const std::uint64_t on_disk = seg1_len + ((flags & 1) ? seg2_len : 0);
  const std::string_view input(reinterpret_cast<const char*>(pieces.bytes().data()), pieces.bytes().size());

  TapJournal journal(salttap::tap::JournalConfig{dir, 1u << 30, 4096, kMaxRecord});
  const auto start = journal.stats();
  FUZZ_CHECK(start.bytes == on_disk);
  FUZZ_CHECK(journal.active() == (on_disk > 0));
  if (flags & 4) {
    FUZZ_CHECK(journal.append(JournalRecordKind::frame, "appended") == TapJournal::Append::ok);
    journal.flush();
  }

  salttap::tap::EventDecoder decoder;
  std::uint64_t handed = 0;
  std::uint64_t handed_bytes = 0;
  bool saw_appended = false;
  for (std::size_t round = 0; round <= size + 2; ++round) {
    const std::size_t n = journal.drain(7, 300, [&](JournalRecordKind kind, std::string_view payload) {
      FUZZ_CHECK(kind == JournalRecordKind::frame || kind == JournalRecordKind::body);
      FUZZ_CHECK(payload.size() <= kMaxRecord);
      if (payload == "appended")
        saw_appended = true;
      else
        FUZZ_CHECK(input.find(payload) != std::string_view::npos);
      ++handed;
      handed_bytes += jf::kHeaderBytes + payload.size();
      (void)(kind == JournalRecordKind::body ? decoder.decode_body(payload) : decoder.decode_frame(payload));
    });
    if (n == 0) break;
  }
  const auto s = journal.stats();
  FUZZ_CHECK(s.drained_frames == handed);
  FUZZ_CHECK(s.bytes == 0);
  const std::uint64_t appended = (flags & 4) ? jf::kHeaderBytes + 8 : 0;
  FUZZ_CHECK(handed_bytes + s.corrupt_bytes == on_disk + appended);
  FUZZ_CHECK(!(flags & 4) || saw_appended);
  FUZZ_CHECK(journal.finish_if_drained());
  FUZZ_CHECK(!journal.active());
  for (const auto& e : fs::directory_iterator(dir))
    FUZZ_CHECK(!jf::parse_segment_file_name(e.path().filename().string()));
  return 0;
}
