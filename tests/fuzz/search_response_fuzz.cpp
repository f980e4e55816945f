// libFuzzer target: the engine's answers to `salttap jobs`, `jobs show` and
// `minions` (history/search_response.h).
//
//   [0..1] HTTP status, big-endian (0: no response)
//   [2]    which answer: 0 jobs hits, 1 returns hits, 2 a minions page (mod 3)
//   [..]   response body
//
// Contract checked: a non-2xx status is an error and nothing else; an error
// leaves no rows; its message is one line, bounded, and valid UTF-8 whenever
// the answer is; every row keeps its `_source` as a JSON object; a minions
// page has named minions and an after_key that is a JSON object or empty;
// every text a table shows fits the width it is cut to; the merged view of
// the jobs rows accounts for every row once.
//
// Seeds: make_corpus.py (hand-made answers, the unit tests' shapes) and the
// real engines' answers.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/text.h"
#include "common/text_table.h"
#include "history/job_merge.h"
#include "history/search_response.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using namespace salttap;

constexpr std::size_t kHeader = 3;
constexpr std::size_t kMaxMessage = 1024;

// A refused answer: a one-line, bounded message; a non-2xx status is always refused.
template <typename T>
bool check_outcome(const salttap::Result<T, history::SearchError>& r, long status, bool answer_is_utf8) {
  if (status < 200 || status > 299) FUZZ_CHECK(!r.has_value());
  if (r.has_value()) return true;
  const history::SearchError& e = r.error();
  FUZZ_CHECK(!e.message.empty() && e.message.size() <= kMaxMessage);
  FUZZ_CHECK(e.message.find_first_of("\n\r") == std::string::npos);
  if (answer_is_utf8) FUZZ_CHECK(salttap::is_valid_utf8(e.message));
  return false;
}

void check_object(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  FUZZ_CHECK(!d.HasParseError() && d.IsObject());
}

void check_fits(std::string_view text) {
  for (const std::size_t width : {std::size_t{1}, std::size_t{8}, std::size_t{40}}) {
    const std::string shown = fit(text, width);
    FUZZ_CHECK(display_width(shown) <= width);
    FUZZ_CHECK(shown.find_first_of("\n\r") == std::string::npos);
  }
}

template <typename Row>
void check_hits(const salttap::Result<history::Hits<Row>, history::SearchError>& r, long status, bool utf8) {
  if (!check_outcome(r, status, utf8)) return;
  for (const auto& row : r.value().rows) {
    check_object(row.source);
    check_fits(row.source);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeader) return 0;
  salttap::http::HttpResponse response;
  response.status = (long{data[0]} << 8) | data[1];
  response.body.assign(reinterpret_cast<const char*>(data) + kHeader, size - kHeader);
  response.host = "http://127.0.0.1:9200";
  response.error = "Connection refused";
  const bool utf8 = salttap::fuzz::decodes_to_utf8(response.body);
  switch (data[2] % 3) {
    case 0: {
      const auto h = history::parse_job_hits(response);
      check_hits(h, response.status, utf8);
      if (!h) break;
      for (const auto& j : h.value().rows) {
        check_fits(j.fun);
        check_fits(j.tgt);
        for (const auto& f : j.failed_states) check_fits(f.comment);
      }
      // The merged view of the same rows (history/job_merge.h): every row in
      // exactly one job, each job seen by a master of its documents, its
      // source a JSON object.
      std::size_t merged_rows = 0;
      for (const auto& m : history::merge_job_rows(h.value().rows)) {
        FUZZ_CHECK(!m.documents.empty() && !m.seen_by.empty());
        merged_rows += m.documents.size();
        check_object(history::merged_source(m));
      }
      FUZZ_CHECK(merged_rows == h.value().rows.size());
      break;
    }
    case 1: {
      const auto h = history::parse_return_hits(response);
      check_hits(h, response.status, utf8);
      if (!h) break;
      for (const auto& r : h.value().rows) check_fits(r.reason);
      break;
    }
    default: {
      const auto answered = history::parse_minion_page(response);
      if (!check_outcome(answered, response.status, utf8)) break;
      const history::MinionPage& page = answered.value();
      if (!page.after_key.empty()) check_object(page.after_key);
      if (page.rows.empty()) FUZZ_CHECK(page.after_key.empty());
      for (const auto& m : page.rows) {
        FUZZ_CHECK(!m.minion.empty());
        check_fits(m.minion);
      }
      break;
    }
  }
  return 0;
}
