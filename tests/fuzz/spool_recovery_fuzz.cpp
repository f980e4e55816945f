// libFuzzer target: the spool's recovery (docs/spool.md) over arbitrary
// files. The input becomes a ledger and one or two segment files:
//
//   [0]    flags: bit 0 ledger present, bit 1 second segment, bit 2 a stray
//          file, bit 3 append one document before acking; bits 4-5
//          segment_bytes: 64 MiB, 64, 256, 4096; bit 6 fix the records'
//          CRCs, bit 7 the ledger's (so mutations reach past the CRC checks:
//          ids going back, odd lengths and classes, ledger values)
//   [1]    ledger length            [2..3] first segment length (big-endian)
//   [4]    second segment's name: seg-<2 + this byte>
//   [5..]  ledger bytes, first segment, second segment (the rest)
//
// A Spool is opened on them, everything is taken and acked, it is destroyed
// and opened again. Contract: construction throws nothing but SpoolError;
// every pending record is handed out exactly once, in increasing id order;
// after everything was acked, the reopened spool is clean and empty.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "common/log.h"
#include "indexer/internal/spool_format.h"
#include "indexer/spool.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

namespace fs = std::filesystem;
using salttap::indexer::BulkDoc;
using salttap::indexer::DocClass;
using salttap::indexer::FsyncPolicy;
using salttap::indexer::Spool;
using salttap::indexer::SpoolConfig;
using salttap::indexer::SpoolError;
using salttap::indexer::SpoolRecord;

constexpr std::string_view kDirPrefix = "salttap-spool-fuzz-";
constexpr std::size_t kHeader = 5;

const fs::path& spool_dir() {
  static const salttap::fuzz::ProcessScratchDir tmp(kDirPrefix);
  static const fs::path path = [] {
    salttap::log::set_level(salttap::log::Level::error);  // recovery WARNs on most inputs
    return tmp.path() / "spool";
  }();
  return path;
}

namespace sf = salttap::indexer::spool_format;

void put_be32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) p[i] = static_cast<std::uint8_t>(v);
}

// Gives every well-formed header (magic, a length that fits) the CRC its
// bytes need, left to right, skipping over each record it fixed.
void fix_record_crcs(std::uint8_t* p, std::size_t n) {
  for (std::size_t at = 0; at + sf::kHeaderBytes <= n;) {
    std::span<const std::uint8_t, sf::kHeaderBytes> header(p + at, sf::kHeaderBytes);
    const auto h = sf::parse_header(header);
    if (!h || h->payload_bytes > n - at - sf::kHeaderBytes) {
      ++at;
      continue;
    }
    const std::string_view payload(reinterpret_cast<const char*>(p + at + sf::kHeaderBytes), h->payload_bytes);
    put_be32(p + at + 20, sf::record_crc(header, payload));
    at += h->record_bytes();
  }
}

void fix_ledger_crc(std::uint8_t* p, std::size_t n) {
  if (n < 28) return;
  sf::Crc32c crc;
  crc.process_bytes(p, 24);
  put_be32(p + 24, crc.checksum());
}

SpoolConfig config_for(std::uint8_t flags) {
  SpoolConfig c;
  c.dir = spool_dir();
  c.fsync = FsyncPolicy::never;  // nothing here needs the disk, and it is fast
  constexpr std::uint64_t kSegmentBytes[] = {64ull << 20, 64, 256, 4096};
  c.segment_bytes = kSegmentBytes[(flags >> 4) & 3];
  return c;
}

// Takes everything, checking each record is new and in order; then acks in
// reverse (acked_id may move only at the last ack).
void drain(Spool& spool, std::uint64_t expected, std::uint64_t& last_id) {
  std::vector<std::uint64_t> ids;
  for (std::uint64_t round = 0; round <= expected + 1; ++round) {
    const auto got = spool.take(3, 200, std::chrono::milliseconds(0));
    if (got.empty()) break;
    for (const SpoolRecord& r : got) {
      FUZZ_CHECK(r.id > last_id);
      last_id = r.id;
      ids.push_back(r.id);
    }
  }
  FUZZ_CHECK(ids.size() == expected);
  FUZZ_CHECK(spool.take(1, 1, std::chrono::milliseconds(0)).empty());
  std::reverse(ids.begin(), ids.end());
  spool.ack(ids);
  const auto st = spool.stats();
  FUZZ_CHECK(st.pending_records == 0);
  FUZZ_CHECK(ids.empty() || st.acked_id == last_id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeader) return 0;
  const fs::path& dir = spool_dir();
  salttap::fuzz::empty_dir(dir);

  const std::uint8_t flags = data[0];
  salttap::fuzz::InputSlices pieces(data, size, kHeader);
  const auto [ledger, ledger_len] = pieces.next(data[1]);
  const auto [seg1, seg1_len] = pieces.next((std::size_t{data[2]} << 8) | data[3]);
  const auto [seg2, seg2_len] = pieces.next(pieces.left());
  if (flags & 0x40) {
    fix_record_crcs(seg1, seg1_len);
    fix_record_crcs(seg2, seg2_len);
  }
  if (flags & 0x80) fix_ledger_crc(ledger, ledger_len);
  if (flags & 1) salttap::fuzz::write_input_file(dir / "ledger", ledger, ledger_len);
  salttap::fuzz::write_input_file(dir / sf::segment_file_name(1), seg1, seg1_len);
  if (flags & 2) salttap::fuzz::write_input_file(dir / sf::segment_file_name(2 + data[4]), seg2, seg2_len);
  if (flags & 4) salttap::fuzz::write_input_file(dir / "seg-1", seg2, seg2_len);  // not a segment name: ignored

  const salttap::fuzz::HeapPeak heap;
  std::uint64_t last_id = 0;
  try {
    Spool spool(config_for(flags));
    const auto& report = spool.recovery();
    FUZZ_CHECK(spool.stats().pending_records == report.pending_records);
    FUZZ_CHECK(report.pending_records <= size / sf::kHeaderBytes);
    std::uint64_t expected = report.pending_records;
    if (flags & 8) {
      const BulkDoc doc{DocClass::job, "{\"create\":{}}\n{}\n"};
      FUZZ_CHECK(spool.append(std::span(&doc, 1)).spooled == 1);
      ++expected;
    }
    drain(spool, expected, last_id);
  } catch (const SpoolError&) {
    return 0;  // the contract allows it (unusable directory); anything else escaping is a bug
  }
  // Memory does not follow the claims in the files: a few 256 KiB read
  // windows, the records taken, the segment list.
  if (heap.growth() > (2u << 20) + 64 * size) {
    std::fprintf(stderr, "spool recovery of %zu bytes allocated %zu bytes at its peak\n", size, heap.growth());
    FUZZ_CHECK(!"heap growth");
  }

  // Everything was acked: the spool reopens clean, empty, ids still going up.
  Spool again(config_for(flags));
  const auto& report = again.recovery();
  FUZZ_CHECK(report.pending_records == 0);
  FUZZ_CHECK(report.corrupt_records == 0 && report.corrupt_bytes == 0);
  FUZZ_CHECK(report.torn_tails == 0);
  FUZZ_CHECK(!report.ledger_rebuilt && !report.ledger_clamped);
  FUZZ_CHECK(again.stats().segments == 0);
  const BulkDoc doc{DocClass::event, "{\"create\":{}}\n{}\n"};
  FUZZ_CHECK(again.append(std::span(&doc, 1)).spooled == 1);
  const auto got = again.take(10, 1 << 20, std::chrono::milliseconds(0));
  FUZZ_CHECK(got.size() == 1 && got[0].id > last_id);
  return 0;
}
