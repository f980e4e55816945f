#pragma once
// What one `_bulk` response means for each document sent (a pure function,
// table-tested in tests/unit/indexer/bulk_result_test.cpp). Outcomes are per item: a
// partly successful bulk is never "done", and nothing is dropped silently.
//
//   transport error, HTTP 429, 5xx       every item: retry (backoff)
//   HTTP 401/403/404/408                 every item: retry, and the operator must act
//   HTTP 413                             every item: retry in smaller batches
//   HTTP 400 (the whole request)         every item: rejected (dead letter)
//   other non-2xx not in the engine's    every item: retry, and the operator must act:
//     error JSON (a proxy's HTML page)     the engine never saw the documents
//   HTTP 200, body not JSON, or fewer    every item: retry; with deterministic _ids
//     items than sent (truncated)        and `create`, a resend cannot duplicate
//   per item 2xx                         delivered
//   per item 409 (already there / newer  delivered: the engine has this version
//     external version)                  or a newer one
//   per item 429, 5xx                    retry that item only
//   per item other 4xx (mapping errors)  rejected, with "<type>: <reason>"
//
// Reasons name the engine's error type and reason, and its first `caused_by`
// ("... (caused by <type>: <reason>)"), which often holds the actionable part.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace salttap::indexer {

enum class ItemOutcome : std::uint8_t { delivered, retry, reject };

struct ItemResult {
  ItemOutcome outcome = ItemOutcome::retry;
  int status = 0;          // the item's HTTP status, 0 when the whole request failed
  std::string reason;      // for retry / reject: "<error.type>: <error.reason>" or why
  std::string error_type;  // the engine's error.type when it gave one (e.g. mapper_parsing_exception)
};

struct BulkOutcome {
  std::vector<ItemResult> items;  // one per document sent, in order
  bool whole_request = false;     // the outcome applies to the request, not to items
  bool split_batch = false;       // 413: send smaller batches
  bool needs_operator = false;    // 401/403/404, a proxy's refusal: configuration, not load
  std::size_t delivered = 0, retry = 0, reject = 0;
};

// `http_status` 0 means no response (connection refused, timeout, TLS error).
[[nodiscard]] BulkOutcome classify_bulk_response(long http_status, std::string_view body, std::size_t items_sent);

}  // namespace salttap::indexer
