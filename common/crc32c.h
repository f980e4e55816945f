#pragma once
// CRC32C (Castagnoli; iSCSI, ext4, Kafka): the checksum of the spool's and
// the tap journal's records. Every byte salttap spools or journals passes
// through it, so it uses the CPU's CRC32 instruction (SSE4.2) where there is
// one, and a table otherwise: the same values either way (the formats on
// disk do not change). The interface is Boost.CRC's `crc_optimal`, which it
// replaces: a byte-at-a-time table cost more CPU than everything else the
// spool does.

#include <cstddef>
#include <cstdint>

namespace salttap {

// `state` is the running register (start 0xFFFFFFFF; the checksum is its complement).
std::uint32_t crc32c_extend(std::uint32_t state, const void* data, std::size_t n);
// The same by the table alone: what crc32c_extend does on a CPU without the
// instruction (public so that the tests check it on every CPU).
std::uint32_t crc32c_extend_portable(std::uint32_t state, const void* data, std::size_t n);
// Whether crc32c_extend uses the CPU's instruction.
bool crc32c_hardware();

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
