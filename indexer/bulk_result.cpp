#include "indexer/bulk_result.h"

#include <fmt/format.h>
#include <rapidjson/document.h>

namespace salttap::indexer {
namespace {

constexpr std::size_t kMaxReason = 500;

BulkOutcome all(std::size_t n, ItemOutcome outcome, int status, std::string reason) {
  BulkOutcome out;
  out.whole_request = true;
  if (reason.size() > kMaxReason) reason.resize(kMaxReason);
  out.items.assign(n, ItemResult{outcome, status, reason});
  (outcome == ItemOutcome::retry ? out.retry : outcome == ItemOutcome::reject ? out.reject : out.delivered) = n;
  return out;
}

std::string error_text(const rapidjson::Value& item) {
  if (!item.HasMember("error")) return {};
  const auto& e = item["error"];
  if (e.IsString()) return e.GetString();
  if (!e.IsObject()) return "error";
  std::string type = e.HasMember("type") && e["type"].IsString() ? e["type"].GetString() : "error";
  std::string reason = e.HasMember("reason") && e["reason"].IsString() ? e["reason"].GetString() : "";
  std::string text = reason.empty() ? type : type + ": " + reason;
  if (text.size() > kMaxReason) text.resize(kMaxReason);
  return text;
}

}  // namespace

BulkOutcome classify_bulk_response(long http_status, std::string_view body, std::size_t n) {
  if (http_status == 0) return all(n, ItemOutcome::retry, 0, "no response from the engine");
  if (http_status == 429 || http_status >= 500)
    return all(n, ItemOutcome::retry, static_cast<int>(http_status), fmt::format("HTTP {}", http_status));
  if (http_status == 413) {
    auto out = all(n, ItemOutcome::retry, 413, "HTTP 413: request too large");
    out.split_batch = true;
    return out;
  }
  if (http_status == 401 || http_status == 403 || http_status == 404 || http_status == 408) {
    auto out = all(n, ItemOutcome::retry, static_cast<int>(http_status),
                   fmt::format("HTTP {}: {}", http_status, body.substr(0, kMaxReason)));
    out.needs_operator = http_status != 408;
    return out;
  }
  if (http_status < 200 || http_status > 299)
    return all(n, ItemOutcome::reject, static_cast<int>(http_status),
               fmt::format("HTTP {}: {}", http_status, body.substr(0, kMaxReason)));

  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("items") || !doc["items"].IsArray())
    return all(n, ItemOutcome::retry, static_cast<int>(http_status), "bulk response is not valid JSON (truncated?)");
  const auto& items = doc["items"];
  if (items.Size() != n)
    return all(n, ItemOutcome::retry, static_cast<int>(http_status),
               fmt::format("bulk response has {} items for {} sent", items.Size(), n));

  BulkOutcome out;
  out.items.reserve(n);
  for (const auto& wrapper : items.GetArray()) {
    ItemResult r;
    if (!wrapper.IsObject() || wrapper.MemberCount() != 1 || !wrapper.MemberBegin()->value.IsObject() ||
        !wrapper.MemberBegin()->value.HasMember("status") || !wrapper.MemberBegin()->value["status"].IsInt()) {
      r = {ItemOutcome::retry, 0, "malformed bulk item"};
    } else {
      const auto& item = wrapper.MemberBegin()->value;
      r.status = item["status"].GetInt();
      if ((r.status >= 200 && r.status <= 299) || r.status == 409) {
        r.outcome = ItemOutcome::delivered;
        if (r.status == 409) r.reason = error_text(item);
      } else if (r.status == 429 || r.status >= 500) {
        r.outcome = ItemOutcome::retry;
        r.reason = error_text(item);
      } else {
        r.outcome = ItemOutcome::reject;
        r.reason = error_text(item);
      }
    }
    (r.outcome == ItemOutcome::delivered ? out.delivered : r.outcome == ItemOutcome::retry ? out.retry : out.reject)++;
    out.items.push_back(std::move(r));
  }
  return out;
}

}  // namespace salttap::indexer
