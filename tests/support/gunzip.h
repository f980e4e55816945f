#pragma once
// Test helper: the data of one gzip member (a request body the shipper
// compressed), so fakes can record and answer what was really sent.

#include <zlib.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace salttap::testing {

inline std::string gunzip(const std::string& in) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) throw std::runtime_error("inflateInit2");  // gzip only
  std::string out(in.size() * 4 + 1024, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  do {
    if (z.total_out == out.size()) out.resize(out.size() * 2);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + z.total_out);
    z.avail_out = static_cast<uInt>(out.size() - z.total_out);
    rc = inflate(&z, Z_NO_FLUSH);
  } while (rc == Z_OK);
  out.resize(z.total_out);
  inflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("not one complete gzip member");
  return out;
}

// `request` as the engine reads it: a body the sender compressed itself
// (sent with its own Content-Encoding header) inflated, and `gzip` set as if
// the client had compressed it.
template <typename Request>
Request as_received(const Request& request) {
  Request r = request;
  const auto header = std::find(r.headers.begin(), r.headers.end(), "Content-Encoding: gzip");
  if (header != r.headers.end()) {
    r.headers.erase(header);
    r.body = gunzip(r.body);
    r.gzip = true;
  }
  return r;
}

}  // namespace salttap::testing
