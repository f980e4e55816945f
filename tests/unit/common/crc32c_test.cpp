// CRC32C by ISA-L gives Boost.CRC's values (the spool's and the journal's
// records on disk were written with Boost's).
#include "common/crc32c.h"

#include <gtest/gtest.h>

#include <boost/crc.hpp>
#include <random>
#include <string>
#include <string_view>

namespace salttap {
namespace {

using BoostCrc32c = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

std::uint32_t boost_crc(std::string_view s) {
  BoostCrc32c c;
  c.process_bytes(s.data(), s.size());
  return c.checksum();
}

std::uint32_t crc(std::string_view s) {
  Crc32c c;
  c.process_bytes(s.data(), s.size());
  return c.checksum();
}

TEST(Crc32c, KnownValues) {
  EXPECT_EQ(crc(""), 0u);
  EXPECT_EQ(crc("123456789"), 0xE3069283u);            // the check value of CRC-32C
  EXPECT_EQ(crc(std::string(32, '\0')), 0x8A9136AAu);  // RFC 3720 B.4
  EXPECT_EQ(crc(std::string(32, '\xff')), 0x62A8AB43u);
}

TEST(Crc32c, MatchesBoostAtEveryLengthAndAlignment) {
  std::mt19937 rng(20261203);
  std::string buf(4096 + 16, '\0');
  for (char& ch : buf) ch = static_cast<char>(rng());
  for (std::size_t offset = 0; offset < 8; ++offset)
    for (std::size_t n = 0; n <= 300; ++n) {
      const std::string_view s(buf.data() + offset, n);
      ASSERT_EQ(crc(s), boost_crc(s)) << "offset " << offset << " length " << n;
    }
  const std::string_view all(buf.data() + 3, 4096);
  EXPECT_EQ(crc(all), boost_crc(all));
}

TEST(Crc32c, PiecesGiveTheWholesChecksum) {
  const std::string s = "a header of twelve bytes and then the payload, in several calls";
  for (std::size_t cut = 0; cut <= s.size(); ++cut) {
    Crc32c c;
    c.process_block(s.data(), s.data() + cut);
    c.process_bytes(s.data() + cut, s.size() - cut);
    ASSERT_EQ(c.checksum(), boost_crc(s)) << cut;
  }
}

TEST(Crc32c, ExtendFromAnyStateMatchesOneCall) {
  // The register passes between calls as it is, not complemented: ISA-L's
  // convention, which crc32c_extend must not leak.
  std::mt19937 rng(7);
  std::string buf(100000, '\0');
  for (char& ch : buf) ch = static_cast<char>(rng());
  for (const std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{333}, std::size_t{65537}, buf.size()}) {
    std::uint32_t state = 0xFFFFFFFF;
    state = crc32c_extend(state, buf.data(), cut);
    state = crc32c_extend(state, buf.data() + cut, buf.size() - cut);
    EXPECT_EQ(~state, boost_crc(buf)) << cut;
  }
}

}  // namespace
}  // namespace salttap
