#include "indexer/internal/embedded_mappings.h"

#include <string>

namespace salttap::indexer {

std::string_view embedded_file(std::string_view name) {
  for (const auto& file : embedded_mapping_files())
    if (file.name == name) return file.text;
  return {};
}

std::string_view embedded_mapping(std::string_view kind) { return embedded_file(std::string(kind) + ".json"); }

}  // namespace salttap::indexer
