// libFuzzer target: engine detection from `GET /` (indexer/server_info.h).
//
//   [0..1] HTTP status, big-endian (0: no response)
//   [2]    length of the X-Elastic-Product header value, which follows
//   [..]   response body (the banner)
//
// Contract checked: a transport or HTTP failure is an error and nothing else;
// an answer gives a flavor or says why not; a usable server has a version
// that matches its number (Elasticsearch >= 7), a hidden OpenSearch version
// is a major from Lucene; the capabilities follow the flavor; every message
// for the operator is one line, bounded, and valid UTF-8 whenever the
// server's answer is (its bytes and the strings they decode to).
//
// Seeds: the banners of tests/unit/indexer/server_info_test.cpp and hand-made cases
// (make_corpus.py), the real banners of the test engines (record_bulk_seeds.py).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/text.h"
#include "http/http_client.h"
#include "indexer/server_info.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using namespace salttap::indexer;

constexpr std::size_t kHeader = 3;
// A message quotes at most three excerpts of the answer (120 bytes each, in
// UTF-8 up to 3 more for the "…") and the host.
constexpr std::size_t kMaxMessage = 1024;

void check_message(const std::string& text, bool answer_is_utf8) {
  FUZZ_CHECK(text.size() <= kMaxMessage);
  FUZZ_CHECK(text.find_first_of("\n\r") == std::string::npos);
  if (answer_is_utf8) FUZZ_CHECK(salttap::is_valid_utf8(text));
}

void check_capabilities(const ServerInfo& info) {
  const std::string_view flat = flat_type(info);
  switch (info.flavor) {
    case Flavor::elasticsearch:
      FUZZ_CHECK(flat.empty() || flat == "flattened");
      FUZZ_CHECK(lifecycle_api(info) == LifecycleApi::ilm);
      break;
    case Flavor::opensearch:
      FUZZ_CHECK(flat.empty() || flat == "flat_object");
      FUZZ_CHECK(lifecycle_api(info) == LifecycleApi::ism);
      FUZZ_CHECK(composable_templates(info));
      break;
    case Flavor::unknown:
      FUZZ_CHECK(flat.empty());
      FUZZ_CHECK(lifecycle_api(info) == LifecycleApi::none);
      FUZZ_CHECK(!composable_templates(info));
      break;
  }
  FUZZ_CHECK(!compatibility_headers_needed(info));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeader) return 0;
  const std::size_t product_len = std::min<std::size_t>(data[2], size - kHeader);
  salttap::http::HttpResponse response;
  response.status = (long{data[0]} << 8) | data[1];
  response.product.assign(reinterpret_cast<const char*>(data) + kHeader, product_len);
  response.body.assign(reinterpret_cast<const char*>(data) + kHeader + product_len, size - kHeader - product_len);
  response.host = "http://127.0.0.1:9200";
  response.error = "Connection refused";
  const bool answer_is_utf8 = salttap::fuzz::decodes_to_utf8(response.body) && salttap::is_valid_utf8(response.product);

  const ServerDetection d = detect_server(response);
  const ServerInfo& info = d.info;
  check_capabilities(info);
  if (response.status < 200 || response.status > 299) {
    FUZZ_CHECK(!d.error.empty());
    check_message(d.error, answer_is_utf8);
    FUZZ_CHECK(info.flavor == Flavor::unknown && !info.usable());
    return 0;
  }
  FUZZ_CHECK(d.error.empty());
  FUZZ_CHECK(info.product_header == response.product);
  FUZZ_CHECK(info.usable() == (info.flavor != Flavor::unknown && info.problem.empty()));
  if (info.flavor == Flavor::unknown) FUZZ_CHECK(!info.problem.empty());
  check_message(info.problem, answer_is_utf8);
  const std::string described = info.describe();
  FUZZ_CHECK(!described.empty());
  if (answer_is_utf8) FUZZ_CHECK(salttap::is_valid_utf8(described));
  if (info.flavor != Flavor::unknown) FUZZ_CHECK(described.find(to_string(info.flavor)) == 0);

  if (info.version_hidden) {
    // Only OpenSearch hides its version; the major comes from Lucene (0: unknown).
    FUZZ_CHECK(info.flavor == Flavor::opensearch);
    FUZZ_CHECK(info.version.major >= 0 && info.version.major <= 3);
    FUZZ_CHECK(info.version.minor == 0 && info.version.patch == 0);
  } else if (info.usable()) {
    // The version was read from the number ("major.minor[.patch]...").
    const ServerVersion& v = info.version;
    FUZZ_CHECK(v.major >= 0 && v.minor >= 0 && v.patch >= 0);
    FUZZ_CHECK(!info.number.empty() && info.number[0] >= '0' && info.number[0] <= '9');
    if (info.flavor == Flavor::elasticsearch) FUZZ_CHECK(v.major >= 7);
  }
  return 0;
}
