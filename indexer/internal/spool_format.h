#pragma once
// The disk spool's bytes (docs/spool.md): record and ledger encoding,
// segment file names, and the segment scan that recovery and the reader
// share. Nothing here touches the filesystem: bytes come in through a
// ByteSource, so the scan is tested on memory and fuzzed through the Spool.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/crc32c.h"
#include "indexer/document.h"

namespace salttap::indexer::spool_format {

// CRC32C (Castagnoli), as iSCSI / ext4 / Kafka use it.
using Crc32c = salttap::Crc32c;

inline constexpr std::uint32_t kRecordMagic = 0x53545031;  // "STP1"
inline constexpr std::size_t kHeaderBytes = 24;
// A bigger document is refused at append (no engine takes a bulk body that
// size), and a header claiming more is not a header.
inline constexpr std::uint32_t kMaxPayload = 256u << 20;
// Ids start at 1. A header claiming an id beyond 2^62 is corrupt: no writer
// gets there, so ids recovered from disk leave the writer 2^62 more, and
// id arithmetic never overflows.
inline constexpr std::uint64_t kMaxRecordId = std::uint64_t{1} << 62;

struct RecordHeader {
  std::uint32_t payload_bytes = 0;
  std::uint64_t id = 0;
  DocClass cls = DocClass::event;
  std::uint32_t crc = 0;
  std::uint64_t record_bytes() const { return kHeaderBytes + payload_bytes; }
};

// Appends one whole record (header, then payload) to `out`.
void append_record(std::string& out, std::uint64_t id, DocClass cls, std::string_view payload);
// The header's fields when its magic, class, reserved bytes and length are
// well-formed; the CRC can only be checked together with the payload.
[[nodiscard]] std::optional<RecordHeader> parse_header(std::span<const unsigned char, kHeaderBytes> bytes);
// The CRC a record with this header and payload must carry.
std::uint32_t record_crc(std::span<const unsigned char, kHeaderBytes> header, std::string_view payload);

// The ledger: one 64-byte block.
//   0 "STPL" | 4 version (u32 BE) | 8 acked_id (u64 BE) | 16 writer_next_id (u64 BE)
//   | 24 CRC32C of bytes 0..23 (u32 BE) | 28..63 zero
inline constexpr std::size_t kLedgerBytes = 64;
inline constexpr std::uint32_t kLedgerVersion = 1;

struct Ledger {
  std::uint64_t acked_id = 0;
  std::uint64_t writer_next_id = 1;
};
std::array<unsigned char, kLedgerBytes> encode_ledger(const Ledger& ledger);
// nullopt unless exactly 64 bytes with the magic, version 1 and a matching CRC.
[[nodiscard]] std::optional<Ledger> decode_ledger(std::span<const unsigned char> bytes);

// "seg-" and the first record id in 20 digits, so names sort by id.
std::string segment_file_name(std::uint64_t first_id);
[[nodiscard]] std::optional<std::uint64_t> parse_segment_file_name(std::string_view name);

// Random access to one segment's bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to out.size() bytes at `offset`; fewer only at the end of the
  // data. Throws (SpoolError) on an I/O error.
  virtual std::size_t read_at(std::uint64_t offset, std::span<unsigned char> out) = 0;
};

// What lies at an offset of a segment.
enum class Probe : std::uint8_t {
  ok,          // a whole record, CRC verified, id above the previous one
  incomplete,  // the header or the payload runs past the end of the data
  bad,         // wrong magic / class / reserved bytes / length, or CRC mismatch
  stale_id,    // a verified record whose id is not above the previous one
};
std::string_view to_string(Probe p);

// Reads records of one segment through a window, so a scan costs one read()
// per window, not per record, and memory stays at the window whatever the
// segment's size. `size` is how much of the source may be read: the writer's
// segment grows, and only bytes it has finished writing are read.
class SegmentCursor {
 public:
  SegmentCursor(ByteSource& source, std::uint64_t size, std::size_t window = 256u << 10);
  std::uint64_t size() const { return size_; }
  void set_size(std::uint64_t size);

  // The record at `offset`, verified. `payload`, when given, receives it.
  Probe probe(std::uint64_t offset, std::uint64_t prev_id, RecordHeader& header, std::string* payload = nullptr);
  // The first offset after `from` where probe() is ok, or size() if none.
  std::uint64_t resync(std::uint64_t from, std::uint64_t prev_id);

 private:
  // Bytes [offset, offset + n) with n <= window, or nullptr past size().
  const unsigned char* view(std::uint64_t offset, std::size_t n);

  ByteSource& source_;
  std::uint64_t size_;
  std::size_t window_limit_;
  std::vector<unsigned char> window_;
  std::uint64_t window_offset_ = 0;
  std::size_t window_bytes_ = 0;
};

// A run of bytes that holds no valid record, found by scan_segment.
struct BadRegion {
  std::uint64_t begin = 0, end = 0;  // end: the next valid record, or the scanned size
  std::uint64_t prev_id = 0;         // last valid id before it (0: none in the spool)
  std::uint64_t next_id = 0;         // first valid id after it in this segment (0: runs to the end)
  Probe found = Probe::bad;          // what was at `begin`
  bool to_end() const { return next_id == 0; }
};

struct SegmentScan {
  std::uint64_t records = 0;  // valid records
  std::uint64_t first_id = 0, last_id = 0;
  std::uint64_t valid_end = 0;           // just past the last valid record
  std::vector<BadRegion> bad;            // in file order
  std::uint64_t records_after = 0;       // valid records with id > `after`
  std::uint64_t first_offset_after = 0;  // where the first of those starts (valid_end if none)
};

// Walks a whole segment: every valid record, and every bad region skipped
// to the next valid record. `prev_id` is the last valid id of the segments
// before (ids increase across segments); `after` is the acknowledged id.
SegmentScan scan_segment(SegmentCursor& cursor, std::uint64_t prev_id, std::uint64_t after);

}  // namespace salttap::indexer::spool_format
