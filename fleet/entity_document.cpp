#include "fleet/entity_document.h"

#include "common/json_writer.h"

namespace salttap::fleet {
namespace {

void time_or_null(json::Writer& w, std::string_view key, Micros t) {
  json::key(w, key);
  t > 0 ? json::string(w, format_utc(t)) : (void)w.Null();
}

}  // namespace

std::string_view key_state(const MinionEntity& m, bool keys_known) {
  if (!keys_known) return "unknown";
  return m.expected ? "accepted" : "unaccepted";
}

EntityDoc entity_document(std::string_view master, std::string_view minion, const MinionEntity& m,
                          std::string_view key_state, std::int64_t version, Micros updated_at) {
  EntityDoc doc{std::string(minion), version, updated_at, {}};
  json::StringOut os{doc.json};
  json::Writer w(os);
  w.StartObject();
  json::key(w, "master"), w.Text(master);
  json::key(w, "minion"), w.Text(minion);
  json::key(w, "key_state"), json::string(w, key_state);
  json::key(w, "liveness"), json::string(w, to_string(m.liveness));
  time_or_null(w, "last_heard", m.last_heard);
  json::key(w, "last_heard_via"), json::string(w, to_string(m.via));
  json::key(w, "connected"), w.Bool(m.connected);
  time_or_null(w, "last_connected", m.last_connected);
  json::key(w, "silent"), w.Bool(m.silent_since != 0);
  time_or_null(w, "episode_since", m.silent_since);
  json::key(w, "last_highstate");
  if (m.last_highstate.at == 0) {
    w.Null();
  } else {
    w.StartObject();
    time_or_null(w, "at", m.last_highstate.at);
    json::key(w, "jid"), w.Text(m.last_highstate.jid);
    json::key(w, "result"), json::string(w, m.last_highstate.succeeded ? "succeeded" : "failed");
    json::key(w, "test"), w.Bool(m.last_highstate.test);
    w.EndObject();
  }
  json::key(w, "last_successful_highstate");
  if (m.last_successful_highstate.at == 0) {
    w.Null();
  } else {
    w.StartObject();
    time_or_null(w, "at", m.last_successful_highstate.at);
    json::key(w, "jid"), w.Text(m.last_successful_highstate.jid);
    w.EndObject();
  }
  json::key(w, "highstate_freshness"), json::string(w, to_string(m.freshness));
  time_or_null(w, "stale_since", m.stale_since);
  w.EndObject();
  return doc;
}

}  // namespace salttap::fleet
