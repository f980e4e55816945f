#include "indexer/internal/document_ids.h"

#include <fmt/format.h>
#include <xxhash.h>

namespace salttap::indexer {
namespace {

std::string hex(const XXH128_hash_t& h) { return fmt::format("{:016x}{:016x}", h.high64, h.low64); }

}  // namespace

std::string xxh128_hex(std::string_view bytes) { return hex(XXH3_128bits(bytes.data(), bytes.size())); }

std::string xxh128_hex(std::initializer_list<std::string_view> parts) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  const char zero = 0;
  for (std::string_view p : parts) {
    XXH3_128bits_update(state, p.data(), p.size());
    XXH3_128bits_update(state, &zero, 1);
  }
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return hex(h);
}

std::string document_id(std::initializer_list<std::string_view> parts) {
  std::string id;
  for (std::string_view p : parts) {
    if (!id.empty()) id.push_back('/');
    if (p.size() > kMaxIdPart) {
      id.push_back('~');
      id += xxh128_hex(p);
    } else {
      id.append(p);
    }
  }
  return id;
}

}  // namespace salttap::indexer
