#include "fleet/internal/fleet_notices.h"

#include <fmt/format.h>

#include "common/json_writer.h"

namespace salttap::fleet {
namespace {

using correlator::Alert;
using correlator::AlertKind;

std::string episode_key(std::string_view episode, std::string_view minion, Micros since) {
  return fmt::format("{}/{}/{}", episode, minion, since);
}

void time_field(json::Writer& w, std::string_view key, Micros t) {
  json::key(w, key);
  if (t > 0)
    json::string(w, format_utc(t));
  else
    w.Null();
}

// What every fleet alert opens with: its kind, alone in its list of kinds.
void alert_kind(json::Writer& w, AlertKind kind) {
  json::key(w, "alert"), json::string(w, to_string(kind));
  json::key(w, "kinds");
  w.StartArray();
  json::string(w, to_string(kind));
  w.EndArray();
}

// The fields every document of one episode carries.
void episode_fields(json::Writer& w, const EpisodeFacts& f) {
  if (!f.master.empty()) json::key(w, "master"), json::string(w, f.master);
  json::key(w, "minion"), w.Text(f.minion);
  time_field(w, "since", f.entity.silent_since);
  time_field(w, "detected_at", f.entity.detected_at);
  time_field(w, "last_heard", f.entity.last_heard);
  json::key(w, "last_heard_via"), json::string(w, to_string(f.entity.via));
  json::key(w, "rule"), w.Text(f.rule);
  json::key(w, "window_s"), w.Int64(f.entity.window / kMicrosPerSecond);
}

Alert episode_alert(AlertKind kind, const EpisodeFacts& f, Micros at, std::int64_t version,
                    std::string_view resolution) {
  Alert alert{
      kind,   {kind}, "", "", f.entity.silent_since, at, episode_key("minion_silent", f.minion, f.entity.silent_since),
      version};
  json::StringOut os{alert.json};
  json::Writer w(os);
  w.StartObject();
  alert_kind(w, kind);
  json::key(w, "episode"), json::string(w, "minion_silent");
  episode_fields(w, f);
  if (resolution.empty()) {
    time_field(w, "resolved_at", 0);
  } else {
    time_field(w, "resolved_at", at);
    json::key(w, "resolution"), json::string(w, resolution);
    json::key(w, "duration_s"), w.Int64(std::max<Micros>(0, at - f.entity.silent_since) / kMicrosPerSecond);
  }
  w.EndObject();
  return alert;
}

// A highstate run as the stale episode's documents show it: null when none.
void run_field(json::Writer& w, std::string_view key, const HighstateRun& run, bool full) {
  json::key(w, key);
  if (run.at == 0) {
    w.Null();
    return;
  }
  w.StartObject();
  time_field(w, "at", run.at);
  json::key(w, "jid"), w.Text(run.jid);
  if (full) {
    json::key(w, "result"), json::string(w, run.succeeded ? "succeeded" : "failed");
    json::key(w, "test"), w.Bool(run.test);
  }
  w.EndObject();
}

Alert stale_alert(AlertKind kind, const EpisodeFacts& f, Micros at, std::int64_t version, std::string_view resolution) {
  const MinionEntity& m = f.entity;
  Alert alert{kind,   {kind}, "", "", m.stale_since, at, episode_key("highstate_stale", f.minion, m.stale_since),
              version};
  json::StringOut os{alert.json};
  json::Writer w(os);
  w.StartObject();
  alert_kind(w, kind);
  json::key(w, "episode"), json::string(w, "highstate_stale");
  if (!f.master.empty()) json::key(w, "master"), json::string(w, f.master);
  json::key(w, "minion"), w.Text(f.minion);
  time_field(w, "since", m.stale_since);
  time_field(w, "detected_at", m.stale_detected_at);
  run_field(w, "last_successful_highstate", m.last_successful_highstate, false);
  run_field(w, "last_highstate", m.last_highstate, true);
  json::key(w, "rule"), w.Text(f.rule);
  json::key(w, "window_s"), w.Int64(m.stale_window / kMicrosPerSecond);
  if (resolution.empty()) {
    time_field(w, "resolved_at", 0);
  } else {
    time_field(w, "resolved_at", at);
    json::key(w, "resolution"), json::string(w, resolution);
    json::key(w, "duration_s"), w.Int64(std::max<Micros>(0, at - m.stale_since) / kMicrosPerSecond);
  }
  w.EndObject();
  return alert;
}

}  // namespace

Alert highstate_stale_alert(const EpisodeFacts& facts) {
  return stale_alert(AlertKind::highstate_stale, facts, facts.entity.stale_detected_at, 1, "");
}

Alert highstate_fresh_alert(const EpisodeFacts& facts, Micros resolved_at) {
  return stale_alert(AlertKind::highstate_fresh, facts, resolved_at, 2, "highstate_ok");
}

Alert closed_stale_record(const EpisodeFacts& facts, Micros resolved_at, std::string_view resolution) {
  return stale_alert(AlertKind::highstate_stale, facts, resolved_at, 2, resolution);
}

Alert minion_silent_alert(const EpisodeFacts& facts) {
  return episode_alert(AlertKind::minion_silent, facts, facts.entity.detected_at, 1, "");
}

Alert minion_recovered_alert(const EpisodeFacts& facts, Micros resolved_at) {
  return episode_alert(AlertKind::minion_recovered, facts, resolved_at, 2, "heard");
}

Alert closed_episode_record(const EpisodeFacts& facts, Micros resolved_at, std::string_view resolution) {
  return episode_alert(AlertKind::minion_silent, facts, resolved_at, 2, resolution);
}

Alert fleet_storm_alert(AlertKind kind, std::string_view master, const std::vector<std::string>& minions,
                        Micros oldest_since, Micros now, std::size_t list_cap) {
  Alert alert{kind, {kind}, "", "", now, now};
  json::StringOut os{alert.json};
  json::Writer w(os);
  w.StartObject();
  alert_kind(w, kind);
  if (!master.empty()) json::key(w, "master"), json::string(w, master);
  json::key(w, "count"), w.Uint64(minions.size());
  json::key(w, "minions");
  w.StartArray();
  for (std::size_t i = 0; i < minions.size() && i < list_cap; ++i) w.Text(minions[i]);
  w.EndArray();
  time_field(w, "oldest_since", oldest_since);
  time_field(w, "detected_at", now);
  w.EndObject();
  return alert;
}

}  // namespace salttap::fleet
