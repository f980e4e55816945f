#include "http/gzip.h"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace salttap::http {
namespace {

// igzip's working memory per level (its hash tables), by its recommended sizes.
constexpr std::array<std::size_t, kGzipMaxLevel + 1> kLevelBufSize = {ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT,
                                                                      ISAL_DEF_LVL2_DEFAULT, ISAL_DEF_LVL3_DEFAULT};

// Per thread and kept across bodies: the stream, the level's working memory
// and an output buffer that only grows. The result is copied out of it
// (about a seventh of the input), which is cheaper than handing out a
// zero-filled buffer of the worst case per body.
struct Scratch {
  isal_zstream stream{};
  std::vector<std::uint8_t> level_buf;
  std::vector<std::uint8_t> out;
};

}  // namespace

std::string gzip_compress(std::string_view data, int level) {
  level = std::clamp(level, 0, kGzipMaxLevel);
  thread_local Scratch s;
  s.level_buf.resize(kLevelBufSize[static_cast<std::size_t>(level)]);
  // Deflate's worst case (stored blocks) adds 5 bytes per 64 KiB block, plus the gzip header and trailer.
  const std::size_t bound = data.size() + data.size() / 8192 + 1024;
  if (s.out.size() < bound) s.out.resize(bound);

  isal_zstream& z = s.stream;
  isal_deflate_init(&z);
  z.level = static_cast<std::uint32_t>(level);
  z.level_buf = s.level_buf.empty() ? nullptr : s.level_buf.data();
  z.level_buf_size = static_cast<std::uint32_t>(s.level_buf.size());
  z.gzip_flag = IGZIP_GZIP;
  z.flush = NO_FLUSH;
  z.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(data.data()));
  std::size_t in_left = data.size();
  std::size_t produced = 0;
  // avail_in is 32 bits: feed bodies larger than that in pieces.
  for (;;) {
    const auto piece = static_cast<std::uint32_t>(std::min<std::size_t>(in_left, UINT32_MAX));
    z.avail_in = piece;
    z.end_of_stream = piece == in_left ? 1 : 0;
    z.next_out = s.out.data() + produced;
    z.avail_out = static_cast<std::uint32_t>(std::min<std::size_t>(s.out.size() - produced, UINT32_MAX));
    const std::uint32_t out_before = z.avail_out;
    const int rc = isal_deflate(&z);
    if (rc != COMP_OK) throw GzipError("gzip: isal_deflate failed with code " + std::to_string(rc));
    produced += out_before - z.avail_out;
    in_left -= piece - z.avail_in;
    if (z.internal_state.state == ZSTATE_END) break;
    if (z.avail_out == 0) {
      s.out.resize(s.out.size() * 2);  // never with the bound above; safe if wrong
    } else if (out_before == z.avail_out && z.avail_in == piece) {
      // Room to write, and it neither read nor wrote: another call would not either.
      throw GzipError("gzip: isal_deflate made no progress");
    }
  }
  return {reinterpret_cast<const char*>(s.out.data()), produced};
}

}  // namespace salttap::http
