#include "indexer/internal/gzip.h"

#include <libdeflate.h>

#include <algorithm>
#include <memory>

namespace salttap::indexer {
namespace {

struct FreeCompressor {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};
using Compressor = std::unique_ptr<libdeflate_compressor, FreeCompressor>;

// One compressor per thread and level, kept: a body is compressed whole
// (libdeflate has no streaming), and its buffers are allocated once.
libdeflate_compressor* compressor(int level) {
  thread_local int cached_level = -1;
  thread_local Compressor cached;
  if (!cached || cached_level != level) {
    cached.reset(libdeflate_alloc_compressor(level));
    cached_level = cached ? level : -1;
    if (!cached) throw GzipError("gzip: libdeflate_alloc_compressor failed (out of memory?)");
  }
  return cached.get();
}

}  // namespace

std::string gzip_compress(std::string_view data, int level) {
  libdeflate_compressor* c = compressor(std::clamp(level, 0, 9));
  std::string out(libdeflate_gzip_compress_bound(c, data.size()), '\0');
  const std::size_t n = libdeflate_gzip_compress(c, data.data(), data.size(), out.data(), out.size());
  if (n == 0) throw GzipError("gzip: libdeflate_gzip_compress failed");  // the bound is always enough
  out.resize(n);
  return out;
}

}  // namespace salttap::indexer
