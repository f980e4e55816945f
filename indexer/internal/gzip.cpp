#include "indexer/internal/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <limits>

namespace salttap::indexer {
namespace {
// deflateInit2's windowBits: 15 (32 KiB window) + 16 = gzip header and trailer instead of zlib's.
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kMemLevel = 8;  // zlib's default
// zlib counts in 32-bit uInt: bodies over 4 GiB go through in pieces.
constexpr std::size_t kMaxPiece = std::numeric_limits<uInt>::max();

struct Deflater {
  z_stream z{};
  ~Deflater() { deflateEnd(&z); }
};
}  // namespace

std::string gzip_compress(std::string_view data, int level) {
  Deflater d;
  z_stream& z = d.z;
  if (deflateInit2(&z, std::clamp(level, 0, 9), Z_DEFLATED, kGzipWindowBits, kMemLevel, Z_DEFAULT_STRATEGY) != Z_OK)
    throw GzipError("gzip: deflateInit2 failed (out of memory?)");
  // deflateBound covers the deflate stream; 18 bytes more for the gzip header and trailer.
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 18, '\0');
  std::size_t used = 0, in_pos = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (z.avail_in == 0) {
      const std::size_t piece = std::min(data.size() - in_pos, kMaxPiece);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_pos));
      z.avail_in = static_cast<uInt>(piece);
      in_pos += piece;
    }
    if (used == out.size()) out.resize(out.size() * 2);
    const std::size_t room = std::min(out.size() - used, kMaxPiece);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    z.avail_out = static_cast<uInt>(room);
    rc = deflate(&z, in_pos == data.size() ? Z_FINISH : Z_NO_FLUSH);
    used += room - z.avail_out;
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) throw GzipError("gzip: deflate failed");
  }
  out.resize(used);
  return out;
}

}  // namespace salttap::indexer
