#include "jobcache/internal/job_dir.h"

#include <openssl/evp.h>

namespace salttap::jobcache {

std::optional<std::string> jid_digest(std::string_view jid, const std::string& hash_type) {
  const EVP_MD* md = EVP_get_digestbyname(hash_type.c_str());
  if (md == nullptr) return std::nullopt;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(jid.data(), jid.size(), digest, &size, md, nullptr) != 1) return std::nullopt;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(std::size_t{size} * 2);
  for (unsigned int i = 0; i < size; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0x0f]);
  }
  return hex;
}

std::optional<std::filesystem::path> job_dir(const std::filesystem::path& jobs_dir, std::string_view jid,
                                             const std::string& hash_type) {
  const auto hex = jid_digest(jid, hash_type);
  if (!hex || hex->size() < 3) return std::nullopt;
  return jobs_dir / hex->substr(0, 2) / hex->substr(2);
}

}  // namespace salttap::jobcache
