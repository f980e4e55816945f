#pragma once
// The job browser's page, stylesheet and script (web/assets/*) compiled into
// the binary at build time (cmake/EmbedTextFiles.cmake): no data files at
// run time, and nothing fetched from anywhere else.

#include <span>
#include <string_view>

#include "common/embedded_file.h"

namespace salttap::web {

// Every file of web/assets/, sorted by name (generated source).
std::span<const EmbeddedFile> embedded_ui_files();

}  // namespace salttap::web
