#include "history/job_merge.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include <rapidjson/document.h>

#include "common/json_writer.h"

namespace salttap::history {
namespace {

// How good an outcome is: the merge keeps the best any master saw.
constexpr int kPendingRank = 0;
constexpr int kMissingRank = 1;
constexpr int kLateRank = 2;
constexpr int kFailedRank = 3;
constexpr int kSucceededRank = 4;

bool without_new(const JobRow& j) { return j.kind == "orphan" || j.kind == "scheduled"; }

// The publisher: a document with the `new` event's user and arguments, the
// earliest (a syndic's republish and a cluster peer's copy come later or at
// the same time), then by master for a stable answer.
const JobRow* publisher_of(const std::vector<JobRow>& docs) {
  const JobRow* best = nullptr;
  for (const auto& d : docs) {
    if (without_new(d) || d.user.empty()) continue;
    if (!best || d.started_at < best->started_at || (d.started_at == best->started_at && d.master < best->master))
      best = &d;
  }
  return best;
}

struct Outcome {
  int rank = kPendingRank;
  std::string status = "pending";
  bool late = false;
  std::set<std::string> heard_by;   // masters that had a return
  std::set<std::string> judged_by;  // masters that had any verdict
};

MergedJob merge_group(std::vector<JobRow> docs) {
  std::stable_sort(docs.begin(), docs.end(),
                   [](const JobRow& a, const JobRow& b) { return a.started_at > b.started_at; });
  MergedJob m;
  const JobRow* pub = publisher_of(docs);
  m.publisher = pub ? pub->master : std::string{};
  m.job = pub ? *pub : docs.front();
  m.fleet = m.job.fleet;
  std::set<std::string> masters;
  for (const auto& d : docs) masters.insert(d.master);
  m.seen_by.assign(masters.begin(), masters.end());

  std::map<std::string, Outcome> by_minion;
  std::set<std::string> syndics, expected;
  const auto see = [&](const std::string& master, const std::vector<std::string>& names, int rank, const char* status,
                       const std::set<std::string>& late) {
    for (const auto& n : names) {
      Outcome& o = by_minion[n];
      const bool was_late = late.contains(n);
      const int r = rank >= kFailedRank && was_late ? kLateRank : rank;
      if (rank > kMissingRank) o.heard_by.insert(master);
      o.judged_by.insert(master);
      if (r > o.rank || (r == o.rank && r == kLateRank && rank > kFailedRank && o.status == "failed")) {
        o.rank = r;
        o.status = status;
        o.late = was_late;
      }
    }
  };
  for (const auto& d : docs) {
    const std::set<std::string> late(d.late_list.begin(), d.late_list.end());
    for (const auto& n : d.expected_list) {
      expected.insert(n);
      by_minion.try_emplace(n);
    }
    see(d.master, d.succeeded_list, kSucceededRank, "succeeded", late);
    see(d.master, d.failed_list, kFailedRank, "failed", late);
    see(d.master, d.missing_list, kMissingRank, "missing", {});
    syndics.insert(d.syndics.begin(), d.syndics.end());
    m.lists_capped = m.lists_capped || d.truncated;
  }
  // A syndic that stood in for its minions on one master never answers for
  // itself: unless it did, it is no minion of this job.
  for (const auto& s : syndics)
    if (auto at = by_minion.find(s); at != by_minion.end() && at->second.rank <= kMissingRank) {
      by_minion.erase(at);
      expected.erase(s);
    }

  std::int64_t succeeded = 0, failed = 0, missing = 0, late = 0, pending = 0;
  for (auto& [name, o] : by_minion) {
    MergedMinion mm{name, o.status, o.late, {}};
    const auto& by = o.heard_by.empty() ? o.judged_by : o.heard_by;
    mm.seen_by.assign(by.begin(), by.end());
    m.minions.push_back(std::move(mm));
    succeeded += o.status == "succeeded" ? 1 : 0;
    failed += o.status == "failed" ? 1 : 0;
    missing += o.status == "missing" ? 1 : 0;
    pending += o.status == "pending" ? 1 : 0;
    late += o.late ? 1 : 0;
  }
  m.documents = std::move(docs);
  if (m.documents.size() == 1) return m;  // one master's word: as it stands

  JobRow& j = m.job;
  if (m.lists_capped) {
    // The lists hold at most list_cap names each: the counts are the largest any master counted.
    for (const auto& d : m.documents) {
      j.expected = std::max(j.expected, d.expected);
      j.returned = std::max(j.returned, d.returned);
      j.succeeded = std::max(j.succeeded, d.succeeded);
      j.failed = std::max(j.failed, d.failed);
      j.missing = std::max(j.missing, d.missing);
      j.late = std::max(j.late, d.late);
    }
  } else if (j.kind != "runner" && j.kind != "wheel") {
    std::set<std::string> all = expected;
    for (const auto& mm : m.minions)
      if (mm.status == "succeeded" || mm.status == "failed") all.insert(mm.minion);
    j.expected = static_cast<std::int64_t>(all.size());
    j.succeeded = succeeded;
    j.failed = failed;
    j.missing = missing;
    j.late = late;
    j.pending = pending;
    j.returned = succeeded + failed;
  }
  bool running = false;
  for (const auto& d : m.documents) running = running || d.status == "running";
  if (j.kind == "runner" || j.kind == "wheel") {
    // No minions: the publisher's verdict.
  } else if (j.failed > 0) {
    j.status = "failed";
  } else if (running && j.pending > 0) {
    j.status = "running";
  } else if (j.missing > 0) {
    j.status = "missing";
  } else {
    j.status = "succeeded";
  }
  // Failed states: each master's, once.
  std::set<std::pair<std::string, std::string>> have;
  for (const auto& f : j.failed_states) have.emplace(f.minion, f.id);
  for (const auto& d : m.documents)
    for (const auto& f : d.failed_states)
      if (have.emplace(f.minion, f.id).second) j.failed_states.push_back(f);
  return m;
}

// Splits one fleet's documents of a jid into jobs that agree on what ran.
std::vector<std::vector<JobRow>> by_call(std::vector<JobRow> docs) {
  std::vector<std::vector<JobRow>> groups;
  std::vector<JobRow> argless;
  for (auto& d : docs) {
    if (without_new(d) && d.args_text.empty()) {
      argless.push_back(std::move(d));
      continue;
    }
    auto same = std::find_if(groups.begin(), groups.end(), [&](const std::vector<JobRow>& g) {
      const JobRow& f = g.front();
      // A document without arguments (an orphan's first return had none to
      // give) agrees with any arguments; two documents with theirs must match.
      return f.fun == d.fun && (f.args_text == d.args_text || f.args_text.empty() || d.args_text.empty());
    });
    if (same == groups.end())
      groups.push_back({std::move(d)});
    else
      same->push_back(std::move(d));
  }
  for (auto& d : argless) {
    std::vector<JobRow>* only = nullptr;
    int matches = 0;
    for (auto& g : groups) {
      if (g.front().fun != d.fun) continue;
      only = &g;
      ++matches;
    }
    if (matches == 1)
      only->push_back(std::move(d));
    else
      groups.push_back({std::move(d)});
  }
  return groups;
}

void add_strings(rapidjson::Value& into, const char* name, const std::vector<std::string>& values,
                 rapidjson::Document::AllocatorType& a) {
  rapidjson::Value list(rapidjson::kArrayType);
  for (const auto& v : values)
    list.PushBack(rapidjson::Value(v.c_str(), static_cast<rapidjson::SizeType>(v.size()), a), a);
  into.RemoveMember(name);
  into.AddMember(rapidjson::Value(name, a), list, a);
}

}  // namespace

std::vector<MergedJob> merge_job_documents(std::vector<JobRow> documents) {
  std::vector<MergedJob> out;
  if (documents.empty()) return out;
  std::map<std::string, std::vector<JobRow>> by_fleet;
  for (auto& d : documents) by_fleet[d.fleet].push_back(std::move(d));
  for (auto& [fleet, docs] : by_fleet)
    for (auto& group : by_call(std::move(docs))) out.push_back(merge_group(std::move(group)));
  std::stable_sort(out.begin(), out.end(), [](const MergedJob& a, const MergedJob& b) {
    return a.documents.front().started_at > b.documents.front().started_at;
  });
  return out;
}

std::vector<MergedJob> merge_job_rows(std::vector<JobRow> rows) {
  std::vector<MergedJob> out;
  // A jid's documents come together (a collapsed search); one group per run of a jid.
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t end = i + 1;
    while (end < rows.size() && rows[end].jid == rows[i].jid) ++end;
    std::vector<JobRow> docs(std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(i)),
                             std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(end)));
    for (auto& m : merge_job_documents(std::move(docs))) out.push_back(std::move(m));
    i = end;
  }
  return out;
}

std::string merged_source(const MergedJob& job) {
  rapidjson::Document doc;
  doc.Parse(job.job.source.data(), job.job.source.size());
  if (doc.HasParseError() || !doc.IsObject()) doc.SetObject();
  auto& a = doc.GetAllocator();
  const auto set_string = [&](const char* name, const std::string& value) {
    doc.RemoveMember(name);
    doc.AddMember(rapidjson::Value(name, a),
                  rapidjson::Value(value.c_str(), static_cast<rapidjson::SizeType>(value.size()), a), a);
  };
  if (job.documents.size() > 1) {
    set_string("status", job.job.status);
    rapidjson::Value counts(rapidjson::kObjectType);
    for (const auto& [name, value] : {std::pair{"expected", job.job.expected}, std::pair{"returned", job.job.returned},
                                      std::pair{"succeeded", job.job.succeeded}, std::pair{"failed", job.job.failed},
                                      std::pair{"missing", job.job.missing}, std::pair{"late", job.job.late},
                                      std::pair{"pending", job.job.pending}})
      counts.AddMember(rapidjson::Value(name, a), rapidjson::Value(value), a);
    doc.RemoveMember("counts");
    doc.AddMember("counts", counts, a);
    rapidjson::Value lists(rapidjson::kObjectType);
    std::vector<std::string> expected, succeeded, failed, missing, late;
    for (const auto& m : job.minions) {
      expected.push_back(m.minion);
      if (m.status == "succeeded") succeeded.push_back(m.minion);
      if (m.status == "failed") failed.push_back(m.minion);
      if (m.status == "missing") missing.push_back(m.minion);
      if (m.late) late.push_back(m.minion);
    }
    add_strings(lists, "expected", expected, a);
    add_strings(lists, "succeeded", succeeded, a);
    add_strings(lists, "failed", failed, a);
    add_strings(lists, "missing", missing, a);
    add_strings(lists, "late", late, a);
    doc.RemoveMember("minions");
    doc.AddMember("minions", lists, a);
  }
  set_string("fleet", job.fleet);
  set_string("publisher", job.publisher);
  add_strings(doc, "seen_by", job.seen_by, a);
  std::string out;
  json::StringOut sink{out};
  json::Writer w(sink);
  doc.Accept(w);
  return out;
}

}  // namespace salttap::history
