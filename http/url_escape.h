#pragma once
// A text as one path segment of a URL: every byte but RFC 3986's unreserved
// ones (letters, digits, - . _ ~) as %XX, by libcurl (which stays in http/).
// For document ids in engine paths, which may hold '/', spaces or anything.

#include <string>
#include <string_view>

namespace salttap::http {

std::string escape_path_segment(std::string_view text);

}  // namespace salttap::http
