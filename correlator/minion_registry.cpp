#include "correlator/minion_registry.h"

namespace salttap::correlator {

MinionId MinionRegistry::intern(std::string_view name) {
  // Debian's Abseil has its own string_view type (not std::string_view).
  if (auto it = ids_.find(absl::string_view(name.data(), name.size())); it != ids_.end()) return it->second;
  const auto id = static_cast<MinionId>(names_.size());
  names_.emplace_back(name);
  facts_.emplace_back();
  ids_.emplace(std::string(name), id);
  return id;
}

std::size_t MinionRegistry::memory_bytes() const {
  std::size_t bytes = names_.capacity() * sizeof(std::string) + facts_.capacity() * sizeof(MinionFacts) +
                      ids_.capacity() * (sizeof(std::string) + sizeof(MinionId) + 1);
  for (const auto& n : names_)
    if (n.size() > 15) bytes += 2 * (n.capacity() + 1);  // the name is stored twice (vector + map key)
  return bytes;
}

}  // namespace salttap::correlator
