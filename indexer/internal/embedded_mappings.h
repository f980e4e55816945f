#pragma once
// The index contract (mappings/*.json) compiled into the binary at build time
// (cmake/EmbedTextFiles.cmake), so the installed daemon needs no data files.

#include <span>
#include <string_view>

#include "common/embedded_file.h"

namespace salttap::indexer {

// Every mappings/*.json, sorted by name (generated source).
std::span<const EmbeddedFile> embedded_mapping_files();

// mappings/<name>; empty when there is no such file.
std::string_view embedded_file(std::string_view name);
// The template body (settings + mappings) of an index kind ("jobs" -> jobs.json).
std::string_view embedded_mapping(std::string_view kind);

}  // namespace salttap::indexer
