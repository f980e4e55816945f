#include "cli/internal/fleet_command.h"

#include <algorithm>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/internal/engine_flags.h"
#include "common/atomic_file.h"
#include "common/json_writer.h"
#include "common/log.h"
#include "common/text_table.h"
#include "fleet/fleet_state_format.h"

namespace salttap::cli {
namespace {

using fleet::Freshness;
using fleet::HighstateRun;
using fleet::Liveness;
using fleet::MinionEntity;

std::string time_or_dash(Micros t) { return t > 0 ? short_time(format_utc(t)) : "-"; }

std::string ago(Micros now, Micros t) {
  if (t <= 0) return "-";
  const Micros s = std::max<Micros>(0, now - t) / kMicrosPerSecond;
  if (s < 120) return fmt::format("{}s", s);
  if (s < 7200) return fmt::format("{}m", s / 60);
  if (s < 172800) return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

// The expected minions, silent ones first, the longest silent first.
std::vector<const std::pair<std::string, MinionEntity>*> silent_of(const fleet::FleetSnapshot& s) {
  std::vector<const std::pair<std::string, MinionEntity>*> out;
  for (const auto& m : s.minions)
    if (m.second.liveness == Liveness::silent) out.push_back(&m);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto* a, const auto* b) { return a->second.silent_since < b->second.silent_since; });
  return out;
}

// null when the minion has had no such run.
void highstate_json(json::Writer& w, const char* key, const fleet::HighstateRun& run, bool full) {
  json::key(w, key);
  if (run.at == 0) {
    w.Null();
    return;
  }
  w.StartObject();
  json::key(w, "at"), json::string(w, format_utc(run.at));
  json::key(w, "jid"), w.Text(run.jid);
  if (full) {
    json::key(w, "result"), json::string(w, run.succeeded ? "succeeded" : "failed");
    json::key(w, "test"), w.Bool(run.test);
  }
  w.EndObject();
}

std::string_view run_result(const fleet::HighstateRun& run) {
  if (run.at == 0) return "never";
  return run.succeeded ? "succeeded" : "failed";
}

bool counted(const fleet::FleetSnapshot& s, const MinionEntity& m) { return m.expected || !s.keys_known; }

std::array<std::uint64_t, fleet::kFreshnessStates> freshness_counts(const fleet::FleetSnapshot& s) {
  std::array<std::uint64_t, fleet::kFreshnessStates> counts{};
  for (const auto& [id, m] : s.minions)
    if (counted(s, m)) ++counts[static_cast<std::size_t>(m.freshness)];
  return counts;
}

// "highstate: 3 succeeded 1 failed 0 never (the last run of each minion; 2 in test mode);
//  freshness: 1 stale 2 fresh 1 never 0 unwatched"
std::string highstate_line(const fleet::FleetSnapshot& s) {
  std::uint64_t succeeded = 0, failed = 0, never = 0, test = 0;
  for (const auto& [id, m] : s.minions) {
    if (!counted(s, m)) continue;
    const HighstateRun& run = m.last_highstate;
    (run.at == 0 ? never : run.succeeded ? succeeded : failed) += 1;
    if (run.at != 0 && run.test) ++test;
  }
  const auto fresh = freshness_counts(s);
  const auto count = [&](Freshness f) { return fresh[static_cast<std::size_t>(f)]; };
  return fmt::format(
      "highstate: {} succeeded {} failed {} never (the last run of each minion; {} in test mode); freshness: {} stale "
      "{} fresh {} never {} unwatched\n",
      succeeded, failed, never, test, count(Freshness::stale), count(Freshness::fresh), count(Freshness::never),
      count(Freshness::unwatched));
}

void print_json(const fleet::FleetSnapshot& s, std::FILE* out) {
  std::string text;
  json::StringOut os{text};
  json::Writer w(os);
  w.StartObject();
  json::key(w, "saved_at"), json::string(w, format_utc(s.saved_at));
  json::key(w, "expected_from"), json::string(w, s.keys_known ? "keys" : "heard");
  json::key(w, "counts");
  w.StartObject();
  std::array<std::uint64_t, fleet::kLivenessStates> counts{};
  for (const auto& [id, m] : s.minions)
    if (counted(s, m)) ++counts[static_cast<std::size_t>(m.liveness)];
  for (std::size_t i = 0; i < counts.size(); ++i)
    json::key(w, fleet::to_string(static_cast<Liveness>(i))), w.Uint64(counts[i]);
  w.EndObject();
  json::key(w, "highstate_freshness");
  w.StartObject();
  const auto fresh = freshness_counts(s);
  for (std::size_t i = 0; i < fresh.size(); ++i)
    json::key(w, fleet::to_string(static_cast<Freshness>(i))), w.Uint64(fresh[i]);
  w.EndObject();
  json::key(w, "minions");
  w.StartArray();
  for (const auto& [id, m] : s.minions) {
    w.StartObject();
    json::key(w, "minion"), w.Text(id);
    json::key(w, "liveness"), json::string(w, fleet::to_string(m.liveness));
    json::key(w, "last_heard");
    m.last_heard > 0 ? json::string(w, format_utc(m.last_heard)) : (void)w.Null();
    json::key(w, "last_heard_via"), json::string(w, fleet::to_string(m.via));
    json::key(w, "connected"), w.Bool(m.connected);
    json::key(w, "silent_since");
    m.silent_since > 0 ? json::string(w, format_utc(m.silent_since)) : (void)w.Null();
    json::key(w, "window_s"), w.Int64(m.window / kMicrosPerSecond);
    highstate_json(w, "last_highstate", m.last_highstate, true);
    highstate_json(w, "last_successful_highstate", m.last_successful_highstate, false);
    json::key(w, "highstate_freshness"), json::string(w, fleet::to_string(m.freshness));
    json::key(w, "stale_since");
    m.stale_since > 0 ? json::string(w, format_utc(m.stale_since)) : (void)w.Null();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  text.push_back('\n');
  print(out, text);
}

Colour freshness_colour(Freshness f) {
  switch (f) {
    case Freshness::fresh:
      return Colour::green;
    case Freshness::stale:
      return Colour::red;
    case Freshness::never:
    case Freshness::unwatched:
      break;
  }
  return Colour::none;
}

// Every expected minion's last highstate (those of one freshness, when
// asked), the oldest successful one first (never first of all): the
// minions furthest from their configuration.
void print_highstates(const fleet::FleetSnapshot& s, Micros now, const HistoryOutput& output, const std::string& head,
                      std::optional<Freshness> only, std::FILE* out) {
  std::vector<const std::pair<std::string, MinionEntity>*> rows;
  for (const auto& m : s.minions)
    if (counted(s, m.second) && (!only || m.second.freshness == *only)) rows.push_back(&m);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->second.last_successful_highstate.at < b->second.last_successful_highstate.at;
  });
  Table table;
  // Too wide for the terminal: the jid goes first, the freshness never.
  table.columns = {{"minion", true},          {"freshness"},
                   {"last highstate"},        {"result", false, false, 1},
                   {"mode", false, false, 1}, {"jid", false, false, 2},
                   {"last successful"},       {"ago", false, true}};
  for (const auto* p : rows) {
    const MinionEntity& m = p->second;
    const HighstateRun& last = m.last_highstate;
    const Colour result_colour = last.at == 0 ? Colour::none : last.succeeded ? Colour::green : Colour::red;
    table.rows.push_back({{p->first, Colour::bold},
                          {std::string(fleet::to_string(m.freshness)), freshness_colour(m.freshness)},
                          {time_or_dash(last.at)},
                          {std::string(run_result(last)), result_colour},
                          {last.at == 0 ? "-"
                           : last.test  ? "test"
                                        : "enforce"},
                          {last.at == 0 ? "-" : last.jid},
                          {time_or_dash(m.last_successful_highstate.at)},
                          {ago(now, m.last_successful_highstate.at)}});
  }
  print(out, head + render(table, output.width, output.colour));
}

}  // namespace

void print_fleet(const fleet::FleetSnapshot& s, Micros now, const HistoryOutput& output, std::FILE* out,
                 bool highstates, std::optional<Freshness> only) {
  if (output.format == "json") return print_json(s, out);
  std::array<std::uint64_t, fleet::kLivenessStates> counts{};
  for (const auto& [id, m] : s.minions)
    if (counted(s, m)) ++counts[static_cast<std::size_t>(m.liveness)];
  std::string text = fmt::format("fleet as of {} (expected from {}):", time_or_dash(s.saved_at),
                                 s.keys_known ? "the accepted keys" : "minions heard lately");
  for (std::size_t i = 0; i < counts.size(); ++i)
    text += fmt::format(" {} {}", counts[i], fleet::to_string(static_cast<Liveness>(i)));
  text += "\n" + highstate_line(s);
  if (highstates) return print_highstates(s, now, output, text, only, out);
  const auto silent = silent_of(s);
  if (silent.empty()) {
    print(out, text + "no silent minions\n");
    return;
  }
  Table table;
  table.columns = {{"minion", true},         {"silent since"},           {"for", false, true},          {"last heard"},
                   {"via", false, false, 1}, {"window", false, true, 2}, {"connected", false, false, 3}};
  for (const auto* p : silent) {
    const MinionEntity& m = p->second;
    table.rows.push_back({{p->first, Colour::bold},
                          {time_or_dash(m.silent_since), Colour::red},
                          {ago(now, m.silent_since)},
                          {time_or_dash(m.last_heard)},
                          {std::string(fleet::to_string(m.via))},
                          {fmt::format("{}s", m.window / kMicrosPerSecond)},
                          {m.connected ? "yes" : "no"}});
  }
  print(out, text + render(table, output.width, output.colour));
}

Command add_fleet_command(CLI::App& app, std::string& config_path) {
  struct Flags {
    std::string state;
    HistoryOutput output;
    std::string freshness;  // --highstate's value: stale, never or fresh; empty: every minion
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "fleet", "The fleet as `salttap run` last saved it: counts by liveness, then the silent minions");
  cmd->add_option("--config", config_path, "salttap's config file (where `run` keeps its state)");
  cmd->add_option("--state", f->state, "The fleet state file (default: the one the config's `run` writes)");
  auto* highstate =
      cmd->add_option("--highstate", f->freshness,
                      "Every minion's highstate freshness, last highstate and last successful one, the oldest "
                      "successful first; with stale, never or fresh: only those")
          ->expected(0, 1)
          ->check(CLI::IsMember({"stale", "never", "fresh"}));
  add_format_flag(*cmd, f->output.format);
  return {cmd,
          [f, highstate](Invocation& call) {
            const std::filesystem::path path =
                f->state.empty() ? config::fleet_state_path(call.config()) : std::filesystem::path(f->state);
            const AtomicFile file(path);
            auto bytes = file.read(fleet::kMaxFleetStateBytes);
            if (!bytes) {
              log::error("fleet: {} (is `salttap run` running with this config, fleet.enabled: true?)",
                         bytes.error().text());
              return 1;
            }
            auto snapshot = fleet::decode_fleet_state(bytes.value());
            if (!snapshot) {
              log::error("fleet: {}: {}", path.string(), snapshot.error());
              return 1;
            }
            const std::optional<Freshness> only =
                f->freshness.empty() ? std::nullopt : fleet::parse_freshness(f->freshness);
            print_fleet(snapshot.value(), SystemClock().now(), on_terminal(f->output, stdout), stdout,
                        highstate->count() > 0, only);
            return 0;
          },
          true};
}

}  // namespace salttap::cli
