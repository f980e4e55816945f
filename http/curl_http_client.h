#pragma once
// The real HttpClient, on libcurl (the only libcurl in salttap): the
// shipper's workers, index setup and the alert webhook each make their own.

#include <memory>

#include "http/http_client.h"

namespace salttap::http {

// One libcurl easy handle (keep-alive across calls): one per thread.
std::unique_ptr<HttpClient> make_curl_client(const HttpClientConfig& config);

}  // namespace salttap::http
