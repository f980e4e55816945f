#include "common/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <climits>

namespace salttap {

std::uint32_t crc32c_extend(std::uint32_t state, const void* data, std::size_t n) {
  // ISA-L takes the register in and gives it back, without the final
  // complement, and takes a non-const pointer it only reads and an int length.
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  while (n > 0) {
    const std::size_t step = std::min<std::size_t>(n, INT_MAX);
    state = crc32_iscsi(p, static_cast<int>(step), state);
    p += step;
    n -= step;
  }
  return state;
}

}  // namespace salttap
