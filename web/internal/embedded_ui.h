#pragma once
// The job browser's page, stylesheet and script (web/assets/*) compiled into
// the binary at build time (cmake/EmbedTextFiles.cmake): no data files at
// run time, and nothing fetched from anywhere else.

#include <span>
#include <string_view>

namespace salttap::web {

struct EmbeddedFile {
  std::string_view name;  // "app.js"
  std::string_view text;
};

// Every file of web/assets/, sorted by name (generated source).
std::span<const EmbeddedFile> embedded_ui_files();

}  // namespace salttap::web
