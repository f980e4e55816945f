#include "cli/internal/minions_command.h"

#include <CLI/CLI.hpp>
#include <memory>
#include "cli/internal/engine_flags.h"
#include "common/time_bound.h"
#include "http/curl_http_client.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/json_writer.h"
#include "common/log.h"
#include "common/text_table.h"
#include "history/history_client.h"
#include "history/search_response.h"

namespace salttap::cli {

int list_minions(http::HttpClient& http, const indexer::IndexLayout& layout, std::optional<Micros> since,
                 const HistoryOutput& output, std::FILE* out) {
  const auto fetched = history::fetch_minions(http, layout, since);
  if (!fetched) return report("minions", fetched.error());
  const std::vector<history::MinionRow>& rows = fetched.value();
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

Command add_minions_command(CLI::App& app, std::string& config_path) {
  struct Flags {
    std::string since = "7d";
    HistoryOutput output;
    EngineFlags engine;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "minions", "Per minion: jobs, failed, missing, last seen; flaky minions first (exit codes: docs/commands.md)");
  cmd->add_option("--since", f->since, "Returns of jobs started at or after this (as for jobs)")->capture_default_str();
  add_engine_flags(*cmd, config_path, f->engine, kEngineConfigHelp);
  add_format_flag(*cmd, f->output.format);
  return {cmd,
          [f](Invocation& call) {
            std::string why;
            const std::optional<Micros> since = parse_time_bound(f->since, SystemClock().now(), why);
            if (!since) return usage_error("minions", "--since: " + why);
            const indexer::IndexerConfig ix = engine_config(call.config(), f->engine);
            auto http = http::make_curl_client(ix.http);
            return list_minions(*http, ix.documents.layout, since, on_terminal(f->output, stdout), stdout);
          },
          true};
}

}  // namespace salttap::cli
