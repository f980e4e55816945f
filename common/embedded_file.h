#pragma once
// One text file compiled into the binary at build time
// (cmake/EmbedTextFiles.cmake): the index contract's mappings, the job
// browser's assets. Each folder that embeds files declares the function that
// lists its own.

#include <string_view>

namespace salttap {

struct EmbeddedFile {
  std::string_view name;  // "jobs.json", "app.js"
  std::string_view text;
};

}  // namespace salttap
