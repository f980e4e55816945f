#include "fleet/internal/fleet_notices.h"

#include <fmt/format.h>

#include "common/json_writer.h"

namespace salttap::fleet {
namespace {

using correlator::Alert;
using correlator::AlertKind;

std::string episode_key(std::string_view minion, Micros since) {
  return fmt::format("minion_silent/{}/{}", minion, since);
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
  Alert alert{kind, {kind}, "", "", f.entity.silent_since, at, episode_key(f.minion, f.entity.silent_since), version};
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

}  // namespace

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
