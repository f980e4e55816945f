#include "service/minions_command.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/json_writer.h"
#include "common/log.h"
#include "service/history_query.h"
#include "service/search_response.h"
#include "service/text_table.h"

namespace salttap::service {

Result<std::vector<MinionRow>, SearchError> fetch_minions(indexer::HttpClient& http, const indexer::IndexLayout& layout,
                                                          std::optional<Micros> since, std::string_view minion,
                                                          std::size_t page_size) {
  std::map<std::string, MinionRow> minions;  // a minion a page repeats is counted once
  std::string after;
  // An engine that keeps sending new after_keys with pages would never let
  // the loop end: 10 million minions is beyond any fleet.
  constexpr int kMaxPages = 10000;
  for (int pages = 1;; ++pages) {
    if (pages > kMaxPages) {
      log::warn("minions: stopped after {} pages of {} minions; the counts are of those", kMaxPages, kMinionPageSize);
      break;
    }
    const auto answered =
        parse_minion_page(search(http, layout, "returns", minions_page_body(since, after, minion, page_size)));
    if (!answered) return answered.error();
    const MinionPage& page = answered.value();
    for (const auto& row : page.rows) minions[row.minion] = row;
    // A composite page holds fewer buckets than asked only when none are
    // left: asking again would scan every return of the window once more.
    if (page.rows.size() < page_size || page.after_key.empty() || page.after_key == after) break;
    after = page.after_key;
  }
  std::vector<MinionRow> rows;
  rows.reserve(minions.size());
  for (auto& [_, row] : minions) rows.push_back(std::move(row));
  // Flaky first: most failed or missing returns, then the most jobs, then by name.
  std::stable_sort(rows.begin(), rows.end(), [](const MinionRow& a, const MinionRow& b) {
    if (a.failed + a.missing != b.failed + b.missing) return a.failed + a.missing > b.failed + b.missing;
    return a.jobs > b.jobs;
  });
  return rows;
}

int list_minions(indexer::HttpClient& http, const indexer::IndexLayout& layout, std::optional<Micros> since,
                 const HistoryOutput& output, std::FILE* out) {
  const auto fetched = fetch_minions(http, layout, since);
  if (!fetched) return report("minions", fetched.error());
  const std::vector<MinionRow>& rows = fetched.value();
  if (output.format == "json") {
    for (const auto& m : rows) {
      std::string line;
      json::StringOut sink{line};
      json::Writer w(sink);
      w.StartObject();
      json::key(w, "minion");
      json::string(w, m.minion);
      for (const auto& [name, n] : {std::pair{"jobs", m.jobs}, std::pair{"succeeded", m.succeeded},
                                    std::pair{"failed", m.failed}, std::pair{"missing", m.missing}}) {
        json::key(w, name);
        w.Uint64(n);
      }
      json::key(w, "last_seen");
      if (m.last_seen.empty())
        w.Null();
      else
        json::string(w, m.last_seen);
      w.EndObject();
      print(out, line + "\n");
    }
    return kHistoryOk;
  }
  if (rows.empty()) {
    log::info("minions: no returns in the window");
    return kHistoryOk;
  }
  Table t{{{"MINION", true},
           {"JOBS", false, true},
           {"SUCCEEDED", false, true},
           {"FAILED", false, true},
           {"MISSING", false, true},
           {"LAST SEEN (UTC)"}},
          {}};
  for (const auto& m : rows)
    t.rows.push_back({{m.minion},
                      {std::to_string(m.jobs)},
                      {std::to_string(m.succeeded)},
                      {std::to_string(m.failed), m.failed > 0 ? Colour::red : Colour::none},
                      {std::to_string(m.missing), m.missing > 0 ? Colour::yellow : Colour::none},
                      {short_time(m.last_seen)}});
  print(out, render(t, output.width, output.colour));
  return kHistoryOk;
}

}  // namespace salttap::service
