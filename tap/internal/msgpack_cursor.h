#pragma once
// The cursor both one-pass msgpack readers walk their input with: TreeBuilder
// (msgpack_tree.cpp) builds objects, the JSON transcoder (json_transcoder.cpp)
// writes JSON, and the two must check and advance byte for byte alike (the
// same status and stop offset on any input). So the bounds check, the
// big-endian reads and the sizes of the fixed-length parts after a type byte
// live here, once.

#include <cstddef>
#include <string_view>

namespace salttap::tap {

class MsgpackCursor {
 protected:
  MsgpackCursor(std::string_view bytes, std::size_t offset)
      : begin_(reinterpret_cast<const unsigned char*>(bytes.data())),
        p_(begin_ + offset),
        end_(begin_ + bytes.size()) {}

  // Where the cursor stands, from the start of the input.
  std::size_t offset() const { return static_cast<std::size_t>(p_ - begin_); }

  bool have(std::size_t n) const { return static_cast<std::size_t>(end_ - p_) >= n; }

  // The caller has checked have(sizeof(T)).
  template <typename T>
  T read_be() {
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>((v << 8) | p_[i]);
    p_ += sizeof(T);
    return v;
  }

  // Whether the fixed-length part after type byte `b` (0xc0-0xdf, already
  // read) is all there: a length field, a number, a fixext's type and data.
  // Checked once, so the reads after it need no check of their own.
  bool have_fixed_part(unsigned char b) const {
    static constexpr unsigned char kFixedPart[32] = {
        0, 0, 0, 0,      // c0 nil, c1 -, c2 false, c3 true
        1, 2, 4,         // c4-c6 bin length
        1, 2, 4,         // c7-c9 ext length
        4, 8,            // ca float32, cb float64
        1, 2, 4, 8,      // cc-cf uint
        1, 2, 4, 8,      // d0-d3 int
        2, 3, 5, 9, 17,  // d4-d8 fixext (type + data)
        1, 2, 4,         // d9-db str length
        2, 4,            // dc-dd array length
        2, 4,            // de-df map length
    };
    return have(kFixedPart[b - 0xc0]);
  }

  const unsigned char* begin_;
  const unsigned char* p_;
  const unsigned char* end_;
};

}  // namespace salttap::tap
