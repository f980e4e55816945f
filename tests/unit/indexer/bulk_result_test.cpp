// Bulk response classification, one literal response per case.

#include <gtest/gtest.h>

#include "indexer/internal/bulk_result.h"

namespace salttap::indexer {
namespace {

std::vector<ItemOutcome> outcomes(const BulkOutcome& b) {
  std::vector<ItemOutcome> o;
  for (const auto& i : b.items) o.push_back(i.outcome);
  return o;
}
constexpr auto D = ItemOutcome::delivered;
constexpr auto R = ItemOutcome::retry;
constexpr auto X = ItemOutcome::reject;

TEST(BulkResult, AllCreated) {
  const auto b = classify_bulk_response(200, R"({"took":3,"errors":false,"items":[
    {"create":{"_index":"salt-jobs-2026.11.29","_id":"a","status":201}},
    {"create":{"_index":"salt-jobs-2026.11.29","_id":"b","status":201}}]})",
                                        2);
  EXPECT_EQ(outcomes(b), (std::vector{D, D}));
  EXPECT_EQ(b.delivered, 2u);
  EXPECT_FALSE(b.whole_request);
}

TEST(BulkResult, MixedSuccessRetriesOnlyThe429sAndRejectsMappingErrors) {
  const auto b = classify_bulk_response(200, R"({"errors":true,"items":[
    {"create":{"_id":"a","status":201}},
    {"create":{"_id":"b","status":429,"error":{"type":"es_rejected_execution_exception","reason":"queue full"}}},
    {"create":{"_id":"c","status":400,"error":{"type":"mapper_parsing_exception","reason":"failed to parse field [return]"}}},
    {"index":{"_id":"d","status":503,"error":{"type":"unavailable_shards_exception","reason":"primary shard is not active"}}},
    {"index":{"_id":"e","status":200}}]})",
                                        5);
  EXPECT_EQ(outcomes(b), (std::vector{D, R, X, R, D}));
  EXPECT_EQ(b.items[2].reason, "mapper_parsing_exception: failed to parse field [return]");
  EXPECT_EQ(b.items[1].status, 429);
  EXPECT_EQ(b.delivered, 2u);
  EXPECT_EQ(b.retry, 2u);
  EXPECT_EQ(b.reject, 1u);
}

TEST(BulkResult, A409OnRetryMeansAlreadyDelivered) {
  const auto b = classify_bulk_response(200, R"({"errors":true,"items":[
    {"create":{"_id":"a","status":409,"error":{"type":"version_conflict_engine_exception","reason":"[a]: version conflict, document already exists"}}}]})",
                                        1);
  EXPECT_EQ(outcomes(b), (std::vector{D}));
  EXPECT_NE(b.items[0].reason.find("version_conflict"), std::string::npos);
}

TEST(BulkResult, WholeRequestFailures) {
  for (long status : {0L, 429L, 500L, 502L, 503L}) {
    const auto b = classify_bulk_response(status, "", 3);
    EXPECT_EQ(outcomes(b), (std::vector{R, R, R})) << status;
    EXPECT_TRUE(b.whole_request);
  }
  const auto too_big = classify_bulk_response(413, "", 2);
  EXPECT_TRUE(too_big.split_batch);
  EXPECT_EQ(outcomes(too_big), (std::vector{R, R}));
  const auto auth = classify_bulk_response(401, R"({"error":"unauthorized"})", 1);
  EXPECT_TRUE(auth.needs_operator);
  EXPECT_EQ(outcomes(auth), (std::vector{R})) << "a credentials problem must not drop data";
  const auto malformed = classify_bulk_response(400, R"({"error":{"type":"illegal_argument_exception"}})", 2);
  EXPECT_EQ(outcomes(malformed), (std::vector{X, X}));
}

TEST(BulkResult, TruncatedOrShortBodiesRetryEverything) {
  EXPECT_EQ(outcomes(classify_bulk_response(200, R"({"errors":false,"items":[{"create":{"status":201}})", 2)),
            (std::vector{R, R}));
  EXPECT_EQ(outcomes(classify_bulk_response(200, R"({"errors":false,"items":[{"create":{"status":201}}]})", 2)),
            (std::vector{R, R}));
  EXPECT_EQ(outcomes(classify_bulk_response(200, "<html>proxy error</html>", 1)), (std::vector{R}));
  EXPECT_EQ(outcomes(classify_bulk_response(200, R"({"items":[{"create":{}}]})", 1)), (std::vector{R}));
}

TEST(BulkResult, ReasonsCarryTheErrorTypeAndTheFirstCause) {
  const auto b = classify_bulk_response(200, R"({"errors":true,"items":[
    {"create":{"status":400,"error":{"type":"mapper_parsing_exception","reason":"failed to parse field [n] of type [long]",
      "caused_by":{"type":"illegal_argument_exception","reason":"For input string: \"x\""}}}},
    {"create":{"status":409,"error":{"type":"version_conflict_engine_exception","reason":"already exists"}}},
    {"create":{"status":201}}]})",
                                        3);
  EXPECT_EQ(b.items[0].error_type, "mapper_parsing_exception");
  EXPECT_EQ(b.items[0].reason,
            "mapper_parsing_exception: failed to parse field [n] of type [long] "
            "(caused by illegal_argument_exception: For input string: \"x\")");
  EXPECT_EQ(b.items[1].error_type, "version_conflict_engine_exception");
  EXPECT_EQ(b.items[2].error_type, "");
  EXPECT_EQ(b.items[2].reason, "");
}

TEST(BulkResult, AWholeRequest400NamesTheEnginesErrorNotItsJson) {
  const auto b = classify_bulk_response(
      400,
      R"({"error":{"root_cause":[],"type":"json_e_o_f_exception","reason":"Unexpected end-of-input"},"status":400})",
      2);
  EXPECT_EQ(outcomes(b), (std::vector{X, X}));
  EXPECT_EQ(b.items[1].status, 400);
  EXPECT_EQ(b.items[1].error_type, "json_e_o_f_exception");
  EXPECT_EQ(b.items[1].reason, "HTTP 400: json_e_o_f_exception: Unexpected end-of-input");
}

// nginx refuses a request without the client certificate it requires with
// its own 400 page: the engine never saw the documents, so none is rejected.
TEST(BulkResult, AWholeRequestRefusalThatIsNotTheEnginesKeepsEveryDocument) {
  const auto nginx = classify_bulk_response(400, R"(<html>
<head><title>400 No required SSL certificate was sent</title></head>
<body>
<center><h1>400 Bad Request</h1></center>
<center>No required SSL certificate was sent</center>
<hr><center>nginx/1.22.1</center>
</body>
</html>
)",
                                            3);
  EXPECT_EQ(outcomes(nginx), (std::vector{R, R, R}));
  EXPECT_TRUE(nginx.whole_request);
  EXPECT_TRUE(nginx.needs_operator);
  EXPECT_EQ(nginx.reject, 0u);
  EXPECT_EQ(nginx.items[0].reason,
            "HTTP 400: 400 No required SSL certificate was sent (not the engine's answer: a proxy in between?)");
  const auto plain = classify_bulk_response(400, "Bad Request", 1);
  EXPECT_EQ(outcomes(plain), (std::vector{R}));
  EXPECT_EQ(plain.items[0].reason, "HTTP 400: Bad Request (not the engine's answer: a proxy in between?)");
  const auto redirect = classify_bulk_response(301, "<html><title>301 Moved Permanently</title></html>", 2);
  EXPECT_EQ(outcomes(redirect), (std::vector{R, R}));
  EXPECT_TRUE(redirect.needs_operator);
  const auto auth =
      classify_bulk_response(401, "<html><head><title>401 Authorization Required</title></head></html>", 1);
  EXPECT_EQ(outcomes(auth), (std::vector{R}));
  EXPECT_EQ(auth.items[0].reason,
            "HTTP 401: 401 Authorization Required (not the engine's answer: a proxy in between?)");
  std::string long_page = "<title>";
  while (long_page.size() < 700) long_page += "\u00e9";
  const auto cut = classify_bulk_response(400, long_page + "</title>", 1);
  EXPECT_LE(cut.items[0].reason.size(), 500u);
  EXPECT_NE(cut.items[0].reason.find("(not the engine's answer"), std::string::npos) << "the note survives the cut";
}

TEST(BulkResult, LongReasonsAreCutOnACharacterBoundary) {
  std::string reason;
  while (reason.size() < 600) reason += "\u00e9";  // é: two bytes in UTF-8
  const auto b = classify_bulk_response(
      200, R"({"items":[{"index":{"status":400,"error":{"type":"t","reason":")" + reason + R"("}}}]})", 1);
  const std::string& r = b.items[0].reason;
  EXPECT_LE(r.size(), 500u);
  EXPECT_GE(r.size(), 490u);
  EXPECT_EQ(r.substr(0, 3), "t: ");
  EXPECT_EQ((r.size() - 3) % 2, 0u) << "no half character at the end";
}

TEST(BulkResult, AnItemErrorGivenAsAStringIsOneBoundedLine) {
  // Regression: corpus/bulk_result/items-error-string (kept whole, newlines and all).
  const std::string text = "mapper_parsing_exception\\n at [Source: (byte[])\\r\\n\\tline: 1]" + std::string(600, 'x');
  const auto b = classify_bulk_response(200, R"({"items":[{"create":{"status":400,"error":")" + text + R"("}}]})", 1);
  const std::string& r = b.items[0].reason;
  EXPECT_EQ(r.substr(0, 45), "mapper_parsing_exception  at [Source: (byte[]");
  EXPECT_EQ(r.find_first_of("\n\r\t"), std::string::npos) << r;
  EXPECT_EQ(r.size(), 500u);
}

TEST(BulkResult, AnItemNotDeliveredAlwaysHasAReason) {
  // Regression: corpus/bulk_result/items-no-error-object (dead-lettered with an empty reason).
  const auto b = classify_bulk_response(200, R"({"items":[{"create":{"status":400}},{"create":{"status":503}},
    {"create":{"status":400,"error":""}},{"create":{"status":201}}]})",
                                        4);
  EXPECT_EQ(outcomes(b), (std::vector{X, R, X, D}));
  EXPECT_EQ(b.items[0].reason, "status 400 without an error");
  EXPECT_EQ(b.items[1].reason, "status 503 without an error");
  EXPECT_EQ(b.items[2].reason, "status 400 without an error");
  EXPECT_EQ(b.items[3].reason, "");
}

TEST(BulkResult, ADeeplyNestedBodyIsParsedWithoutRecursion) {
  // Regression: corpus/bulk_result/body-deep-nesting (the recursive parser overflowed the stack).
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_EQ(outcomes(classify_bulk_response(200, R"({"items":)" + deep + "}", 1)), (std::vector{R}));
  const auto rejected = classify_bulk_response(400, R"({"error":)" + deep + "}", 1);
  EXPECT_EQ(outcomes(rejected), (std::vector{X}));
  EXPECT_EQ(rejected.items[0].reason, "HTTP 400: error");
}

}  // namespace
}  // namespace salttap::indexer
