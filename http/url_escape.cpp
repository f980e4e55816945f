#include "http/url_escape.h"

#include <climits>
#include <memory>
#include <new>
#include <stdexcept>

#include <curl/curl.h>

namespace salttap::http {

std::string escape_path_segment(std::string_view text) {
  if (text.empty()) return {};
  if (text.size() > static_cast<std::size_t>(INT_MAX)) throw std::length_error("escape_path_segment: text too long");
  // libcurl takes no handle here since 7.82 (Debian 12 ships 7.88).
  const std::unique_ptr<char, decltype(&curl_free)> escaped(
      curl_easy_escape(nullptr, text.data(), static_cast<int>(text.size())), &curl_free);
  if (!escaped) throw std::bad_alloc();
  return escaped.get();
}

}  // namespace salttap::http
