// libFuzzer target: the `_bulk` response classifier (indexer/bulk_result.h).
//
//   [0..1] HTTP status, big-endian (0: no response)
//   [2]    documents sent
//   [3..]  response body
//
// The body is classified for that many documents, and again for as many as
// its "items" array holds (so mutations of the body reach the per-item rules
// without having to fix byte 2 too). Contract checked on every outcome:
// exactly one result per document sent, counters that add up, the
// whole-request rules of the header's table, per-item outcomes that follow
// the item's status, and reasons that are present for every document not
// delivered, one line, at most 500 bytes, valid UTF-8 whenever the body is
// (its bytes and the strings they decode to).
//
// Seeds: real responses of OpenSearch 2.19 / Elasticsearch 7.17
// (record_bulk_seeds.py, rec-*) and hand-made ones (make_corpus.py).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "common/text.h"
#include "indexer/internal/bulk_result.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using salttap::indexer::BulkOutcome;
using salttap::indexer::ItemOutcome;
using salttap::indexer::ItemResult;

constexpr std::size_t kHeader = 3;
constexpr std::size_t kMaxReason = 500;

bool is_2xx(long status) { return status >= 200 && status <= 299; }

ItemOutcome expected_item_outcome(int status) {
  if (is_2xx(status) || status == 409) return ItemOutcome::delivered;
  if (status == 429 || status >= 500) return ItemOutcome::retry;
  return ItemOutcome::reject;
}

// Statuses that decide alone, whatever the body says.
bool status_decides(long status) {
  return status == 0 || status == 429 || status >= 500 || status == 413 || status == 401 || status == 403 ||
         status == 404 || status == 408;
}

// The engine's own error answer, {"error": ...}; anything else came from someone in between (a proxy).
bool engine_error(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  return !doc.HasParseError() && doc.IsObject() && doc.HasMember("error");
}

// What the whole request means (not 2xx): only the engine can reject documents.
ItemOutcome expected_request_outcome(long status, std::string_view body) {
  if (status_decides(status) || !engine_error(body)) return ItemOutcome::retry;
  return ItemOutcome::reject;
}

// The number of entries of the body's "items" array, or -1 when it has none.
long items_in(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("items") || !doc["items"].IsArray()) return -1;
  return static_cast<long>(doc["items"].Size());
}

void check_reason(const ItemResult& r, bool body_is_utf8) {
  if (r.outcome != ItemOutcome::delivered) FUZZ_CHECK(!r.reason.empty());
  FUZZ_CHECK(r.reason.size() <= kMaxReason);
  FUZZ_CHECK(r.reason.find_first_of("\n\r\t") == std::string::npos);
  if (body_is_utf8) FUZZ_CHECK(salttap::is_valid_utf8(r.reason));
}

void check(long status, std::string_view body, std::size_t sent, long body_items) {
  const BulkOutcome out = salttap::indexer::classify_bulk_response(status, body, sent);
  FUZZ_CHECK(out.items.size() == sent);
  std::size_t delivered = 0, retry = 0, reject = 0;
  const bool body_is_utf8 = salttap::fuzz::decodes_to_utf8(body);
  for (const ItemResult& r : out.items) {
    (r.outcome == ItemOutcome::delivered ? delivered : r.outcome == ItemOutcome::retry ? retry : reject)++;
    check_reason(r, body_is_utf8);
  }
  FUZZ_CHECK(out.delivered == delivered && out.retry == retry && out.reject == reject);
  FUZZ_CHECK(delivered + retry + reject == sent);
  FUZZ_CHECK(out.split_batch == (status == 413));
  const bool proxy_refused = !is_2xx(status) && !status_decides(status) && !engine_error(body);
  FUZZ_CHECK(out.needs_operator == (status == 401 || status == 403 || status == 404 || proxy_refused));

  // A request-level answer: the same outcome, status and reason for every document.
  const bool items_usable = is_2xx(status) && body_items >= 0 && static_cast<std::size_t>(body_items) == sent;
  FUZZ_CHECK(out.whole_request == !items_usable);
  if (out.whole_request) {
    const ItemOutcome want = is_2xx(status) ? ItemOutcome::retry : expected_request_outcome(status, body);
    for (const ItemResult& r : out.items) {
      FUZZ_CHECK(r.outcome == want);
      FUZZ_CHECK(r.status == static_cast<int>(status));
      FUZZ_CHECK(r.reason == out.items.front().reason);
    }
    return;
  }
  // Per item, the status decides; 0 also stands for a malformed item (retried).
  for (const ItemResult& r : out.items) {
    if (r.status == 0) {
      FUZZ_CHECK(r.outcome != ItemOutcome::delivered);
    } else {
      FUZZ_CHECK(r.outcome == expected_item_outcome(r.status));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeader) return 0;
  const long status = (long{data[0]} << 8) | data[1];
  const std::size_t sent = data[2];
  const std::string_view body(reinterpret_cast<const char*>(data) + kHeader, size - kHeader);
  const long body_items = items_in(body);
  check(status, body, sent, body_items);
  // Only as many as a body of this size can describe ("{}," per item at least).
  if (body_items >= 0 && static_cast<std::size_t>(body_items) != sent && body_items <= 4096)
    check(status, body, static_cast<std::size_t>(body_items), body_items);
  return 0;
}
