#include "tap/internal/journal_format.h"

#include <array>
#include <charconv>

#include <fmt/format.h>

namespace salttap::tap::journal_format {
namespace {

void put_u32(unsigned char* p, std::uint32_t v) {
  p[0] = static_cast<unsigned char>(v >> 24);
  p[1] = static_cast<unsigned char>(v >> 16);
  p[2] = static_cast<unsigned char>(v >> 8);
  p[3] = static_cast<unsigned char>(v);
}

std::uint32_t get_u32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

std::uint32_t crc_of(const unsigned char* header, std::string_view payload) {
  Crc32c crc;
  crc.process_bytes(header + 4, 8);
  crc.process_bytes(payload.data(), payload.size());
  return crc.checksum();
}

constexpr std::string_view kSegmentPrefix = "seg-";
constexpr std::size_t kSegmentDigits = 20;

}  // namespace

void append_record(std::string& out, RecordKind kind, std::string_view payload) {
  std::array<unsigned char, kHeaderBytes> h{};
  put_u32(h.data(), kRecordMagic);
  put_u32(h.data() + 4, static_cast<std::uint32_t>(payload.size()));
  h[8] = static_cast<unsigned char>(kind);
  put_u32(h.data() + 12, crc_of(h.data(), payload));
  out.append(reinterpret_cast<const char*>(h.data()), h.size());
  out.append(payload);
}

ParsedRecord parse_record(std::string_view bytes, std::uint64_t max_payload, bool check_crc) {
  ParsedRecord r;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  // A prefix of a header that is already wrong is corrupt, not incomplete:
  // a torn tail is always a prefix of a good record.
  if (bytes.size() >= 4 && get_u32(p) != kRecordMagic) return r;
  if (bytes.size() < kHeaderBytes) {
    r.status = Parse::incomplete;
    r.record_bytes = kHeaderBytes;
    return r;
  }
  const std::uint32_t size = get_u32(p + 4);
  const auto kind = p[8];
  if (size > max_payload || (kind != 1 && kind != 2) || p[9] != 0 || p[10] != 0 || p[11] != 0) return r;
  if (bytes.size() - kHeaderBytes < size) {
    r.status = Parse::incomplete;
    r.record_bytes = kHeaderBytes + std::uint64_t{size};
    return r;
  }
  const std::string_view payload = bytes.substr(kHeaderBytes, size);
  if (check_crc && crc_of(p, payload) != get_u32(p + 12)) return r;
  r.status = Parse::ok;
  r.kind = static_cast<RecordKind>(kind);
  r.payload = payload;
  r.record_bytes = kHeaderBytes + size;
  return r;
}

std::string segment_file_name(std::uint64_t seq) { return fmt::format("{}{:020}", kSegmentPrefix, seq); }

std::optional<std::uint64_t> parse_segment_file_name(std::string_view name) {
  if (name.size() != kSegmentPrefix.size() + kSegmentDigits || !name.starts_with(kSegmentPrefix)) return std::nullopt;
  const std::string_view digits = name.substr(kSegmentPrefix.size());
  std::uint64_t seq = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return seq;
}

}  // namespace salttap::tap::journal_format
