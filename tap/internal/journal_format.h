#pragma once
// The tap journal's bytes (docs/tap-journal.md): record encoding, segment
// file names and the record parser the drain and the start-up scan share.
// Nothing here touches the filesystem, so it is tested on memory.
//
// A record: magic "STJ1" (u32 BE) | payload length N (u32 BE) | kind (u8) |
// 3 reserved zero bytes | CRC32C of bytes 4..11 and the payload (u32 BE) |
// N payload bytes: the frame exactly as read from the bus.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/crc32c.h"
#include "tap/tap_journal.h"

namespace salttap::tap::journal_format {

// CRC32C (Castagnoli), the spool's checksum too.
using Crc32c = salttap::Crc32c;

inline constexpr std::uint32_t kRecordMagic = 0x53544A31;  // "STJ1"
inline constexpr std::size_t kHeaderBytes = 16;

using RecordKind = JournalRecordKind;

// Appends one whole record to `out`.
void append_record(std::string& out, RecordKind kind, std::string_view payload);

enum class Parse : std::uint8_t {
  ok,          // a whole record, CRC verified
  incomplete,  // the bytes end inside the header or the payload
  corrupt,     // bad magic, kind, reserved bytes, length or CRC
};

struct ParsedRecord {
  Parse status = Parse::corrupt;
  RecordKind kind = RecordKind::frame;
  std::string_view payload;        // into the parsed bytes (ok only)
  std::uint64_t record_bytes = 0;  // header + payload (ok), bytes needed to know more (incomplete)
};

// The record at the start of `bytes`. A header claiming more than
// `max_payload` bytes is corrupt: no writer makes one (frames above the
// decode limit are never journaled), and it must not make a reader wait.
// `check_crc` false walks the headers only (the start-up scan's count).
ParsedRecord parse_record(std::string_view bytes, std::uint64_t max_payload, bool check_crc = true);

// "seg-" and a sequence number in 20 digits, so names sort by age.
std::string segment_file_name(std::uint64_t seq);
[[nodiscard]] std::optional<std::uint64_t> parse_segment_file_name(std::string_view name);

}  // namespace salttap::tap::journal_format
