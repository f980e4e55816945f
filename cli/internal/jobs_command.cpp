#include "cli/internal/jobs_command.h"

#include <CLI/CLI.hpp>
#include <memory>
#include "cli/internal/engine_flags.h"
#include "http/curl_http_client.h"

#include <algorithm>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/json_writer.h"
#include "common/log.h"
#include "common/text_table.h"
#include "history/history_client.h"
#include "history/job_merge.h"
#include "history/search_response.h"

namespace salttap::cli {
namespace {

// "2026-11-29T19:25:35.529749Z" -> "11-29 19:25:35": a list of jobs spans
// days, rarely years (the jid, next to it, has the year).
std::string month_day_time(std::string_view iso) {
  const std::string t = short_time(iso);
  return t.size() == 19 && t[4] == '-' ? t.substr(5) : t;
}

std::string ok_of(const history::JobRow& j) {
  return fmt::format("{}/{}", j.succeeded, std::max(j.expected, j.returned));
}

std::string failed_states_of(const history::JobRow& job, std::string_view minion, const history::ReturnRow& r) {
  std::vector<std::string> ids;
  for (const auto& f : job.failed_states)
    if (f.minion == minion) ids.push_back(f.id);
  if (ids.empty()) ids = r.failed_state_ids;  // the job keeps a capped list; the return has its own
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The merged job's `_source` (history/job_merge.h merged_source) with its
// returns: each return's `_source` (a pending minion: only its name and
// status), `seen_by`, and the job's failed states of that minion.
std::string job_with_returns(const history::MergedJob& merged, const std::vector<history::ReturnRow>& returns) {
  const history::JobRow& job = merged.job;
  const std::string source = history::merged_source(merged);
  rapidjson::Document doc;
  doc.Parse(source.data(), source.size());
  auto& a = doc.GetAllocator();
  rapidjson::Value list(rapidjson::kArrayType);
  for (const auto& r : returns) {
    rapidjson::Document ret(&a);
    if (r.source.empty()) {
      ret.SetObject();
      ret.AddMember("minion", rapidjson::Value(r.minion.c_str(), a), a);
      ret.AddMember("status", rapidjson::Value(r.status.c_str(), a), a);
    } else {
      ret.Parse(r.source.data(), r.source.size());
    }
    if (!r.seen_by.empty()) {
      rapidjson::Value by(rapidjson::kArrayType);
      for (const auto& m : r.seen_by) by.PushBack(rapidjson::Value(m.c_str(), a), a);
      ret.RemoveMember("seen_by");
      ret.AddMember("seen_by", by, a);
    }
    rapidjson::Value states(rapidjson::kArrayType);
    for (const auto& f : job.failed_states) {
      if (f.minion != r.minion) continue;
      rapidjson::Value s(rapidjson::kObjectType);
      s.AddMember("id", rapidjson::Value(f.id.c_str(), a), a);
      s.AddMember("function", rapidjson::Value(f.function.c_str(), a), a);
      s.AddMember("comment", rapidjson::Value(f.comment.c_str(), a), a);
      states.PushBack(s, a);
    }
    ret.RemoveMember("failed_states");
    ret.AddMember("failed_states", states, a);
    list.PushBack(rapidjson::Value(ret, a), a);
  }
  doc.RemoveMember("returns");
  doc.AddMember("returns", list, a);
  std::string out;
  json::StringOut sink{out};
  json::Writer w(sink);
  doc.Accept(w);
  return out;
}

std::string job_table(const std::vector<history::MergedJob>& jobs, const HistoryOutput& o) {
  // On a narrow terminal the user, the risk and then the target go first.
  Table t{{{"STARTED (UTC)"},
           {"JID"},
           {"STATUS"},
           {"FUNCTION", true},
           {"TARGET", true, false, 1, 8},
           {"USER", true, false, 3, 8},
           {"OK", false, true},
           {"FAIL", false, true},
           {"MISS", false, true},
           {"RISK", false, false, 2},
           {"MASTERS", true, false, 2, 8}},
          {}};
  for (const auto& merged : jobs) {
    const history::JobRow& j = merged.job;
    t.rows.push_back({{month_day_time(j.started_at)},
                      {or_dash(j.jid)},
                      {or_dash(j.status), status_colour(j.status)},
                      {or_dash(j.fun)},
                      {or_dash(j.tgt)},
                      {or_dash(j.user)},
                      {ok_of(j)},
                      {std::to_string(j.failed), j.failed > 0 ? Colour::red : Colour::none},
                      {std::to_string(j.missing), j.missing > 0 ? Colour::yellow : Colour::none},
                      {or_dash(j.risk), risk_colour(j.risk)},
                      {or_dash(joined(merged.seen_by))}});
  }
  return render(t, o.width, o.colour);
}

std::string job_detail(const history::MergedJob& merged, const std::vector<history::ReturnRow>& returns,
                       std::uint64_t total, const HistoryOutput& o) {
  const history::JobRow& job = merged.job;
  const auto field = [&](std::string_view name, std::string_view value, Colour c = Colour::none) {
    const std::string shown = fit(value, o.width > 10 ? o.width - 10 : 1);
    return fmt::format("{:<10}{}\n", name, o.colour ? paint(shown, c) : shown);
  };
  std::string out;
  out += field("jid", or_dash(job.jid));
  out += field("function", job.args_text.empty() ? or_dash(job.fun) : job.fun + " " + job.args_text);
  out += field("target", or_dash(job.tgt));
  out += field("user", or_dash(job.user));
  out += field("kind", or_dash(job.kind));
  out += field("started", short_time(job.started_at) + " UTC");
  out += field("status", or_dash(job.status), status_colour(job.status));
  out += field("minions", fmt::format("{} ok, {} failed, {} missing", ok_of(job), job.failed, job.missing));
  out += field("risk", or_dash(job.risk), risk_colour(job.risk));
  out += field("fleet", or_dash(merged.fleet));
  out += field("seen by", or_dash(joined(merged.seen_by)));
  out += field("publisher", or_dash(merged.publisher));
  out += "\n";
  Table t{{{"MINION"}, {"STATUS"}, {"RETCODE", false, true}, {"SEEN BY", true, false, 1}, {"DETAIL", true}}, {}};
  for (const auto& r : returns) {
    std::string detail = failed_states_of(job, r.minion, r);
    if (!detail.empty()) detail.insert(0, "failed states: ");
    if (detail.empty()) detail = r.reason;
    if (detail.empty()) detail = r.return_text;
    t.rows.push_back({{or_dash(r.minion)},
                      {or_dash(r.status), status_colour(r.status)},
                      {r.retcode ? std::to_string(*r.retcode) : "-"},
                      {or_dash(joined(r.seen_by.empty() && !r.master.empty() ? std::vector{r.master} : r.seen_by))},
                      {or_dash(detail)}});
  }
  out += render(t, o.width, o.colour);
  if (total > returns.size()) out += fmt::format("({} more returns not shown)\n", total - returns.size());
  if (!job.failed_states.empty()) {
    Table f{{{"MINION"}, {"FAILED STATE", true}, {"FUNCTION"}, {"COMMENT", true}}, {}};
    for (const auto& s : job.failed_states)
      f.rows.push_back(
          {{or_dash(s.minion)}, {or_dash(s.id), Colour::red}, {or_dash(s.function)}, {or_dash(s.comment)}});
    out += "\n" + render(f, o.width, o.colour);
  }
  return out;
}

}  // namespace

int list_jobs(http::HttpClient& http, const indexer::IndexLayout& layout, const history::JobQuery& query,
              const HistoryOutput& output, std::FILE* out) {
  const auto found = history::parse_job_hits(history::search(http, layout, "jobs", history::jobs_search_body(query)));
  if (!found) return report("jobs", found.error());
  const std::vector<history::MergedJob> jobs = history::merge_job_rows(found.value().rows);
  if (output.format == "json") {
    // One master's document as stored; a job several masters saw, merged.
    for (const auto& j : jobs) print(out, (j.documents.size() == 1 ? j.job.source : history::merged_source(j)) + "\n");
  } else if (jobs.empty()) {
    log::info("jobs: no job matches");
  } else {
    print(out, job_table(jobs, output));
  }
  return kHistoryOk;
}

int show_job(http::HttpClient& http, const indexer::IndexLayout& layout, const std::string& jid,
             const HistoryOutput& output, std::FILE* out) {
  const auto found = history::fetch_job(http, layout, jid);
  if (!found) return report("jobs show", found.error());
  const std::vector<history::JobDetail>& jobs = found.value();
  if (jobs.empty()) {
    log::error("jobs show: no job {} in the engine", jid);
    return kHistoryJobUnknown;
  }
  if (jobs.size() > 1) {
    std::string which;
    for (const auto& d : jobs)
      which += fmt::format("{}{} on {} (fleet {})", which.empty() ? "" : "; ", or_dash(d.merged.job.fun),
                           or_dash(joined(d.merged.seen_by)), or_dash(d.merged.fleet));
    log::warn("jobs show: same jid, different jobs: {} jobs have the jid {}: {}", jobs.size(), jid, which);
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const history::Hits<history::ReturnRow>& returns = jobs[i].returns;
    if (returns.total > returns.rows.size())
      log::warn("jobs show: {} of the job's {} returns shown (one page of the engine's at most)", returns.rows.size(),
                returns.total);
    if (output.format == "json") {
      print(out, job_with_returns(jobs[i].merged, returns.rows) + "\n");
    } else {
      if (jobs.size() > 1)
        print(out, fmt::format("{}== job {} of {}: same jid, different jobs\n", i ? "\n" : "", i + 1, jobs.size()));
      print(out, job_detail(jobs[i].merged, returns.rows, returns.total, output));
    }
  }
  return kHistoryOk;
}

Command add_jobs_command(CLI::App& app, std::string& config_path) {
  struct Flags {
    history::JobsArgs args;
    HistoryOutput output, show_output;
    std::string jid;
    EngineFlags engine;  // one for both: before `show` or after it
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "jobs", "The indexed jobs, newest first, from Elasticsearch / OpenSearch (exit codes: docs/commands.md)");
  cmd->require_subcommand(0, 1);
  cmd->add_option("--status", f->args.status, "Only jobs with this status")
      ->check(CLI::IsMember({"succeeded", "failed", "missing", "running"}));
  cmd->add_option("--fun", f->args.fun, "Function glob (* and ?), e.g. 'state.*'");
  cmd->add_option("--minion", f->args.minion, "Minion id glob: a minion the job targeted or that returned");
  cmd->add_option("--user", f->args.user, "User glob");
  cmd->add_option("--tgt", f->args.tgt, "Target glob, matched against the target as published");
  cmd->add_option("--risk", f->args.risk, "Only jobs at or above this risk: low, medium, high, critical");
  cmd->add_option("--since", f->args.since,
                  "Jobs started at or after this: a duration before now (90s, 15m, 2h, 7d, 1h30m) or a UTC "
                  "date or time (2026-11-29, 2026-11-29T19:04[:50][Z|+HH:MM])");
  cmd->add_option("--until", f->args.until, "Jobs started before this (same forms)");
  cmd->add_option("--limit", f->args.limit, "At most this many jobs")->capture_default_str();
  add_engine_flags(*cmd, config_path, f->engine, kEngineConfigHelp);
  add_format_flag(*cmd, f->output.format);
  auto* show = cmd->add_subcommand("show", "One job with every minion's return and its failed states");
  show->add_option("jid", f->jid, "The job id")->required();
  add_engine_flags(*show, config_path, f->engine, kEngineConfigHelp);
  add_format_flag(*show, f->show_output.format);
  return {cmd,
          [f, show](Invocation& call) {
            history::JobQuery query;
            std::string why;
            // Validated first: a bad option is exit 2 before any engine is asked.
            if (!show->parsed() && !history::make_job_query(f->args, SystemClock().now(), query, why))
              return usage_error("jobs", why);
            const indexer::IndexerConfig ix = engine_config(call.config(), f->engine);
            auto http = http::make_curl_client(ix.http);
            if (show->parsed())
              return show_job(*http, ix.documents.layout, f->jid, on_terminal(f->show_output, stdout), stdout);
            return list_jobs(*http, ix.documents.layout, query, on_terminal(f->output, stdout), stdout);
          },
          true};
}

}  // namespace salttap::cli
