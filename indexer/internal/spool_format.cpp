#include "indexer/internal/spool_format.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include "common/enum_names.h"

namespace salttap::indexer::spool_format {
namespace {

void put_be(unsigned char* p, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    p[i] = static_cast<unsigned char>(v & 0xff);
    v >>= 8;
  }
}

std::uint64_t get_be(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

constexpr unsigned char kMagicBytes[4] = {0x53, 0x54, 0x50, 0x31};
constexpr unsigned char kLedgerMagic[4] = {'S', 'T', 'P', 'L'};
constexpr std::size_t kLedgerCrcOffset = 24;
constexpr std::string_view kSegmentPrefix = "seg-";
constexpr std::size_t kSegmentDigits = 20;

// The CRC covers the header from the length field up to the CRC itself,
// then the payload: a flipped magic is caught by the magic check.
constexpr std::size_t kCrcFrom = 4;
constexpr std::size_t kCrcField = 20;

}  // namespace

void append_record(std::string& out, std::uint64_t id, DocClass cls, std::string_view payload) {
  std::array<unsigned char, kHeaderBytes> h{};
  put_be(h.data(), kRecordMagic, 4);
  put_be(h.data() + 4, payload.size(), 4);
  put_be(h.data() + 8, id, 8);
  h[16] = static_cast<unsigned char>(cls);
  put_be(h.data() + kCrcField, record_crc(h, payload), 4);
  out.append(reinterpret_cast<const char*>(h.data()), h.size());
  out.append(payload);
}

std::optional<RecordHeader> parse_header(std::span<const unsigned char, kHeaderBytes> b) {
  if (get_be(b.data(), 4) != kRecordMagic) return std::nullopt;
  if (b[16] >= kDocClasses || b[17] != 0 || b[18] != 0 || b[19] != 0) return std::nullopt;
  RecordHeader h;
  h.payload_bytes = static_cast<std::uint32_t>(get_be(b.data() + 4, 4));
  if (h.payload_bytes > kMaxPayload) return std::nullopt;
  h.id = get_be(b.data() + 8, 8);
  if (h.id == 0 || h.id > kMaxRecordId) return std::nullopt;
  h.cls = static_cast<DocClass>(b[16]);
  h.crc = static_cast<std::uint32_t>(get_be(b.data() + kCrcField, 4));
  return h;
}

std::uint32_t record_crc(std::span<const unsigned char, kHeaderBytes> header, std::string_view payload) {
  Crc32c crc;
  crc.process_block(header.data() + kCrcFrom, header.data() + kCrcField);
  crc.process_bytes(payload.data(), payload.size());
  return crc.checksum();
}

std::array<unsigned char, kLedgerBytes> encode_ledger(const Ledger& ledger) {
  std::array<unsigned char, kLedgerBytes> b{};
  std::memcpy(b.data(), kLedgerMagic, 4);
  put_be(b.data() + 4, kLedgerVersion, 4);
  put_be(b.data() + 8, ledger.acked_id, 8);
  put_be(b.data() + 16, ledger.writer_next_id, 8);
  Crc32c crc;
  crc.process_bytes(b.data(), kLedgerCrcOffset);
  put_be(b.data() + kLedgerCrcOffset, crc.checksum(), 4);
  return b;
}

std::optional<Ledger> decode_ledger(std::span<const unsigned char> b) {
  if (b.size() != kLedgerBytes || std::memcmp(b.data(), kLedgerMagic, 4) != 0) return std::nullopt;
  if (get_be(b.data() + 4, 4) != kLedgerVersion) return std::nullopt;
  Crc32c crc;
  crc.process_bytes(b.data(), kLedgerCrcOffset);
  if (crc.checksum() != get_be(b.data() + kLedgerCrcOffset, 4)) return std::nullopt;
  return Ledger{get_be(b.data() + 8, 8), get_be(b.data() + 16, 8)};
}

std::string segment_file_name(std::uint64_t first_id) { return fmt::format("seg-{:020}", first_id); }

std::optional<std::uint64_t> parse_segment_file_name(std::string_view name) {
  if (name.size() != kSegmentPrefix.size() + kSegmentDigits || !name.starts_with(kSegmentPrefix)) return std::nullopt;
  std::uint64_t id = 0;
  for (const char c : name.substr(kSegmentPrefix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (id > (UINT64_MAX - digit) / 10) return std::nullopt;  // 20 digits can exceed 2^64
    id = id * 10 + digit;
  }
  return id;
}

constexpr EnumName<Probe> kProbeNames[] = {{Probe::ok, "ok"},
                                           {Probe::incomplete, "incomplete record"},
                                           {Probe::bad, "bad header or CRC"},
                                           {Probe::stale_id, "record id not increasing"}};

std::string_view to_string(Probe p) { return name_of(kProbeNames, p, "unknown"); }

SegmentCursor::SegmentCursor(ByteSource& source, std::uint64_t size, std::size_t window)
    : source_(source), size_(size), window_limit_(std::max<std::size_t>(window, kHeaderBytes)) {}

void SegmentCursor::set_size(std::uint64_t size) {
  // Bytes below the old size never change (the writer only appends), so the
  // window stays valid when the segment grows; it is dropped if it shrinks.
  if (size < window_offset_ + window_bytes_) window_bytes_ = 0;
  size_ = size;
}

const unsigned char* SegmentCursor::view(std::uint64_t offset, std::size_t n) {
  if (n > window_limit_ || offset > size_ || size_ - offset < n) return nullptr;
  if (offset >= window_offset_ && offset + n <= window_offset_ + window_bytes_)
    return window_.data() + (offset - window_offset_);
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(window_limit_, size_ - offset));
  // Grown on demand: a small segment never costs a whole window.
  if (window_.size() < want) window_.resize(want);
  window_offset_ = offset;
  window_bytes_ = 0;
  const std::size_t got = source_.read_at(offset, std::span(window_.data(), want));
  window_bytes_ = got;
  return got >= n ? window_.data() : nullptr;  // short: the file shrank under us
}

Probe SegmentCursor::probe(std::uint64_t offset, std::uint64_t prev_id, RecordHeader& header, std::string* payload) {
  if (offset > size_ || size_ - offset < kHeaderBytes) return Probe::incomplete;
  std::array<unsigned char, kHeaderBytes> h;
  const unsigned char* p = view(offset, kHeaderBytes);
  if (p == nullptr) return Probe::incomplete;
  std::memcpy(h.data(), p, h.size());  // the window moves while the payload is read
  const auto parsed = parse_header(h);
  if (!parsed) return Probe::bad;
  header = *parsed;
  const std::uint64_t body = offset + kHeaderBytes;
  if (size_ - body < header.payload_bytes) return Probe::incomplete;

  Crc32c crc;
  crc.process_block(h.data() + kCrcFrom, h.data() + kCrcField);
  if (payload != nullptr) {
    payload->resize(header.payload_bytes);
    auto* out = reinterpret_cast<unsigned char*>(payload->data());
    if (header.payload_bytes <= window_limit_) {
      const unsigned char* src = view(body, header.payload_bytes);
      if (src == nullptr) return Probe::incomplete;
      std::memcpy(out, src, header.payload_bytes);
    } else if (source_.read_at(body, std::span(out, header.payload_bytes)) != header.payload_bytes) {
      return Probe::incomplete;
    }
    crc.process_bytes(out, header.payload_bytes);
  } else {
    for (std::uint64_t done = 0; done < header.payload_bytes;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(window_limit_, header.payload_bytes - done));
      const unsigned char* src = view(body + done, n);
      if (src == nullptr) return Probe::incomplete;
      crc.process_bytes(src, n);
      done += n;
    }
  }
  if (crc.checksum() != header.crc) return Probe::bad;
  return header.id > prev_id ? Probe::ok : Probe::stale_id;
}

std::uint64_t SegmentCursor::resync(std::uint64_t from, std::uint64_t prev_id) {
  if (size_ < kHeaderBytes) return size_;
  const std::uint64_t last_start = size_ - kHeaderBytes;  // a record needs at least its header
  std::uint64_t pos = from + 1;
  while (pos <= last_start) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(window_limit_, size_ - pos));
    const unsigned char* chunk = view(pos, n);
    if (chunk == nullptr) return size_;
    const unsigned char* hit = std::search(chunk, chunk + n, std::begin(kMagicBytes), std::end(kMagicBytes));
    if (hit == chunk + n) {
      pos += n - (sizeof(kMagicBytes) - 1);  // the magic may straddle the window's end
      continue;
    }
    const std::uint64_t candidate = pos + static_cast<std::uint64_t>(hit - chunk);
    if (candidate > last_start) break;
    RecordHeader header;
    if (probe(candidate, prev_id, header) == Probe::ok) return candidate;
    pos = candidate + 1;
  }
  return size_;
}

SegmentScan scan_segment(SegmentCursor& cursor, std::uint64_t prev_id, std::uint64_t after) {
  SegmentScan scan;
  bool have_after = false;
  std::uint64_t offset = 0;
  while (offset < cursor.size()) {
    RecordHeader h;
    const Probe found = cursor.probe(offset, prev_id, h);
    if (found == Probe::ok) {
      if (scan.records++ == 0) scan.first_id = h.id;
      scan.last_id = prev_id = h.id;
      if (h.id > after) {
        if (!have_after) scan.first_offset_after = offset;
        have_after = true;
        ++scan.records_after;
      }
      offset += h.record_bytes();
      scan.valid_end = offset;
      continue;
    }
    BadRegion bad{offset, cursor.resync(offset, prev_id), prev_id, 0, found};
    if (bad.end < cursor.size()) {
      cursor.probe(bad.end, prev_id, h);  // ok: resync just verified it
      bad.next_id = h.id;
    }
    scan.bad.push_back(bad);
    offset = bad.end;
  }
  if (!have_after) scan.first_offset_after = scan.valid_end;
  return scan;
}

}  // namespace salttap::indexer::spool_format
