#pragma once
// gzip (RFC 1952) for request bodies: libcurl only decodes responses
// (CURLOPT_ACCEPT_ENCODING), so the body of a `Content-Encoding: gzip`
// request is compressed here, whole, by ISA-L's igzip. Its level 1 runs at
// about twice libdeflate's level 1 (and four times zlib's) on bulk bodies,
// for output about a tenth larger: the shipper gzips every byte it sends,
// and at these speeds that is a few per cent of a core, not a quarter.

#include <stdexcept>
#include <string>
#include <string_view>

namespace salttap::http {

class GzipError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The highest level igzip has; `gzip_compress` clamps to it.
inline constexpr int kGzipMaxLevel = 3;

// One gzip member holding `data`. `level` is igzip's: 0 (fastest, largest)
// .. 3 (slowest, smallest); values out of range are clamped. Throws GzipError
// when igzip reports an error.
std::string gzip_compress(std::string_view data, int level);

}  // namespace salttap::http
