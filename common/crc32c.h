#pragma once
// CRC32C (Castagnoli; iSCSI, ext4, Kafka): the checksum of the spool's and
// the tap journal's records. Every byte salttap spools or journals passes
// through it, so it is ISA-L's `crc32_iscsi`, which picks the fastest code
// for the CPU at run time (the CRC32 instruction on three streams at once,
// folded by carry-less multiplication): over 20 GB/s on one core, where a
// byte-at-a-time table cost more CPU than everything else the spool does.
// The values are the standard ones (Boost.CRC's `crc_optimal<32, 0x1EDC6F41,
// ...>`, whose interface this keeps), so the formats on disk never change.

#include <cstddef>
#include <cstdint>

namespace salttap {

// `state` is the running register (start 0xFFFFFFFF; the checksum is its complement).
std::uint32_t crc32c_extend(std::uint32_t state, const void* data, std::size_t n);

class Crc32c {
 public:
  void process_bytes(const void* data, std::size_t n) { state_ = crc32c_extend(state_, data, n); }
  void process_block(const void* first, const void* last) {
    process_bytes(first, static_cast<std::size_t>(static_cast<const unsigned char*>(last) -
                                                  static_cast<const unsigned char*>(first)));
  }
  std::uint32_t checksum() const { return ~state_; }
  void reset() { state_ = 0xFFFFFFFF; }

 private:
  std::uint32_t state_ = 0xFFFFFFFF;
};

}  // namespace salttap
