#include "history/history_client.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "common/log.h"
#include "common/time_bound.h"
#include "correlator/audit.h"

namespace salttap::history {

http::HttpResponse search(http::HttpClient& http, const indexer::IndexLayout& layout, std::string_view kind,
                          std::string body) {
  http::HttpRequest request;
  request.method = "POST";
  request.path = search_path(layout, kind);
  request.body = std::move(body);
  return http.send(request);
}

bool make_job_query(const JobsArgs& args, Micros now, JobQuery& q, std::string& error) {
  q.status = args.status;
  q.fun = args.fun;
  q.minion = args.minion;
  q.user = args.user;
  q.tgt = args.tgt;
  q.limit = args.limit;
  if (args.limit == 0 || args.limit > kMaxResultWindow) {
    error = fmt::format("--limit must be 1 to {}", kMaxResultWindow);
    return false;
  }
  if (!args.risk.empty()) {
    q.min_risk = correlator::parse_risk_level(args.risk);
    if (!q.min_risk) {
      error = "--risk: expected none, low, medium, high or critical, got '" + args.risk + "'";
      return false;
    }
  }
  for (const auto& [name, text, bound] :
       {std::tuple{"--since", &args.since, &q.since}, std::tuple{"--until", &args.until, &q.until}}) {
    if (text->empty()) continue;
    std::string why;
    *bound = parse_time_bound(*text, now, why);
    if (!*bound) {
      error = fmt::format("{}: {}", name, why);
      return false;
    }
  }
  if (q.since && q.until && *q.since >= *q.until) {
    error = "--since must be before --until";
    return false;
  }
  return true;
}

namespace {

// How good a return is: the merge keeps, per minion, the best any master indexed.
int return_rank(const ReturnRow& r) {
  if (r.status == "missing") return 1;
  if (r.late) return r.status == "succeeded" ? 3 : 2;
  return r.status == "succeeded" ? 5 : 4;
}

// One row per minion: the best return of the job's masters, with the masters that had one.
Hits<ReturnRow> best_returns(Hits<ReturnRow> all, const MergedJob& job) {
  if (job.documents.size() == 1) return all;
  std::map<std::string, ReturnRow> best;
  std::map<std::string, std::set<std::string>> heard;
  const std::uint64_t fetched = all.rows.size();
  for (auto& r : all.rows) {
    if (r.status != "missing") heard[r.minion].insert(r.master);
    auto at = best.find(r.minion);
    if (at == best.end())
      best.emplace(r.minion, std::move(r));
    else if (return_rank(r) > return_rank(at->second))
      at->second = std::move(r);
  }
  Hits<ReturnRow> out;
  for (const auto& m : job.minions) {
    if (best.contains(m.minion) || m.status != "pending") continue;
    ReturnRow& pending = best[m.minion];  // no master heard from it yet: no document
    pending.minion = m.minion;
    pending.status = "pending";
  }
  for (auto& [minion, r] : best) {
    const auto& by = heard[minion];
    r.seen_by.assign(by.begin(), by.end());
    if (r.seen_by.empty() && !r.master.empty()) r.seen_by.push_back(r.master);
    out.rows.push_back(std::move(r));
  }
  // The page's count, less the duplicates it held.
  out.total = all.total - (fetched - std::min<std::uint64_t>(fetched, out.rows.size()));
  out.total = std::max<std::uint64_t>(out.total, out.rows.size());
  return out;
}

}  // namespace

Result<std::vector<JobDetail>, SearchError> fetch_job(http::HttpClient& http, const indexer::IndexLayout& layout,
                                                      const std::string& jid) {
  auto found = parse_job_hits(search(http, layout, "jobs", job_by_jid_body(jid)));
  if (!found) return found.error();
  std::vector<JobDetail> out;
  for (auto& merged : merge_job_documents(std::move(found.value().rows))) {
    JobDetail detail;
    detail.merged = std::move(merged);
    auto answered = parse_return_hits(search(http, layout, "returns", returns_of_job_body(jid, detail.merged.seen_by)));
    if (!answered && answered.error().problem != SearchProblem::no_indices) return answered.error();
    if (answered) detail.returns = best_returns(std::move(answered).value(), detail.merged);
    out.push_back(std::move(detail));
  }
  return out;
}

Result<std::vector<MinionRow>, SearchError> fetch_minions(http::HttpClient& http, const indexer::IndexLayout& layout,
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

}  // namespace salttap::history
