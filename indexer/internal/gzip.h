#pragma once
// gzip (RFC 1952) for request bodies: libcurl only decodes responses
// (CURLOPT_ACCEPT_ENCODING), so the body of a `Content-Encoding: gzip`
// request is compressed here, whole, by libdeflate: at level 1 it takes
// about half zlib's CPU for a bulk body, and its output is smaller.

#include <stdexcept>
#include <string>
#include <string_view>

namespace salttap::indexer {

class GzipError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One gzip member holding `data`. `level` 0 (stored) .. 9 (smallest); out of
// range values are clamped. Throws GzipError when libdeflate fails (out of memory).
std::string gzip_compress(std::string_view data, int level);

}  // namespace salttap::indexer
