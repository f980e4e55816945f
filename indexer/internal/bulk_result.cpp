#include "indexer/internal/bulk_result.h"

#include <algorithm>

#include <fmt/format.h>
#include <rapidjson/document.h>

namespace salttap::indexer {
namespace {

constexpr std::size_t kMaxReason = 500;
// Iterative: a body nested a million levels deep must not exhaust the stack.
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag;

// One line (reasons go into log lines; engines put "\n at [Source: ...]" in
// theirs), cut at a UTF-8 character boundary (they go into dead-letter JSON too).
void tidy(std::string& s) {
  std::replace_if(
      s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  if (s.size() <= kMaxReason) return;
  std::size_t at = kMaxReason;
  while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  s.resize(at);
}

struct ErrorText {
  std::string type, text;
  bool from_engine = true;  // the engine's {"error": ...} body; false: someone else answered (a proxy)
};

BulkOutcome all(std::size_t n, ItemOutcome outcome, int status, std::string reason, std::string error_type = {}) {
  BulkOutcome out;
  out.whole_request = true;
  tidy(reason);
  out.items.assign(n, ItemResult{outcome, status, reason, std::move(error_type)});
  (outcome == ItemOutcome::retry ? out.retry : outcome == ItemOutcome::reject ? out.reject : out.delivered) = n;
  return out;
}

std::string member_string(const rapidjson::Value& v, const char* name) {
  return v.IsObject() && v.HasMember(name) && v[name].IsString() ? v[name].GetString() : "";
}

// "<type>: <reason> (caused by <type>: <reason>)" from an engine error object (or string).
ErrorText error_text(const rapidjson::Value& e) {
  if (e.IsString()) {
    ErrorText out{"", e.GetString()};
    tidy(out.text);
    return out;
  }
  if (!e.IsObject()) return {"", "error"};
  ErrorText out{member_string(e, "type"), ""};
  const std::string reason = member_string(e, "reason");
  const std::string type = out.type.empty() ? "error" : out.type;
  out.text = reason.empty() ? type : type + ": " + reason;
  if (e.HasMember("caused_by") && e["caused_by"].IsObject()) {
    const auto& cause = e["caused_by"];
    const std::string cause_type = member_string(cause, "type"), cause_reason = member_string(cause, "reason");
    if (!cause_type.empty() || !cause_reason.empty())
      out.text += " (caused by " + (cause_reason.empty() ? cause_type : cause_type + ": " + cause_reason) + ")";
  }
  tidy(out.text);
  return out;
}

ErrorText item_error(const rapidjson::Value& item) {
  if (!item.HasMember("error")) return {};
  return error_text(item["error"]);
}

// A whole-request error: the engine's {"error": {...}, "status": N} when the body is one, else the body's start.
ErrorText request_error(long http_status, std::string_view body) {
  rapidjson::Document doc;
  doc.Parse<kParseFlags>(body.data(), body.size());
  if (!doc.HasParseError() && doc.IsObject() && doc.HasMember("error")) {
    ErrorText e = error_text(doc["error"]);
    e.text = fmt::format("HTTP {}: {}", http_status, e.text);
    return e;
  }
  // An HTML page (nginx, a load balancer) says what it means in its title.
  constexpr std::string_view kOpen = "<title>", kClose = "</title>";
  std::string_view said = body;
  if (const auto open = body.find(kOpen); open != std::string_view::npos) {
    const auto close = body.find(kClose, open);
    if (close != std::string_view::npos) said = body.substr(open + kOpen.size(), close - open - kOpen.size());
  }
  constexpr std::size_t kMaxSaid = 200;  // room left for the note, within kMaxReason
  if (said.size() > kMaxSaid) {
    std::size_t cut = kMaxSaid;
    while (cut > 0 && (static_cast<unsigned char>(said[cut]) & 0xC0) == 0x80) --cut;
    said = said.substr(0, cut);
  }
  return {"", fmt::format("HTTP {}: {} (not the engine's answer: a proxy in between?)", http_status, said), false};
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
    auto e = request_error(http_status, body);
    auto out = all(n, ItemOutcome::retry, static_cast<int>(http_status), std::move(e.text), std::move(e.type));
    out.needs_operator = http_status != 408;
    return out;
  }
  if (http_status < 200 || http_status > 299) {
    auto e = request_error(http_status, body);
    if (!e.from_engine) {
      // A proxy refused the request (nginx's 400 for a missing client
      // certificate, a redirect): the documents never reached the engine,
      // which alone may reject them. Kept and retried; the operator must act.
      auto out = all(n, ItemOutcome::retry, static_cast<int>(http_status), std::move(e.text));
      out.needs_operator = true;
      return out;
    }
    return all(n, ItemOutcome::reject, static_cast<int>(http_status), std::move(e.text), std::move(e.type));
  }

  rapidjson::Document doc;
  doc.Parse<kParseFlags>(body.data(), body.size());
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
      r = {ItemOutcome::retry, 0, "malformed bulk item", {}};
    } else {
      const auto& item = wrapper.MemberBegin()->value;
      r.status = item["status"].GetInt();
      if ((r.status >= 200 && r.status <= 299) || r.status == 409) {
        r.outcome = ItemOutcome::delivered;
      } else if (r.status == 429 || r.status >= 500) {
        r.outcome = ItemOutcome::retry;
      } else {
        r.outcome = ItemOutcome::reject;
      }
      if (r.status < 200 || r.status > 299) {
        auto e = item_error(item);
        // Engines always explain; a dead letter without any reason would not.
        r.reason = e.text.empty() ? fmt::format("status {} without an error", r.status) : std::move(e.text);
        r.error_type = std::move(e.type);
      }
    }
    (r.outcome == ItemOutcome::delivered ? out.delivered : r.outcome == ItemOutcome::retry ? out.retry : out.reject)++;
    out.items.push_back(std::move(r));
  }
  return out;
}

}  // namespace salttap::indexer
