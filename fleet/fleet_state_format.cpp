#include "fleet/fleet_state_format.h"

#include <stdexcept>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/json_writer.h"

namespace salttap::fleet {
namespace {

constexpr std::string_view kFormat = "salttap-fleet";
constexpr int kVersion = 3;
constexpr int kOldestVersion = 1;  // before the highstates

struct Invalid : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const rapidjson::Value& member(const rapidjson::Value& o, const char* key, const std::string& where) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd()) throw Invalid(fmt::format("{}.{}: missing", where, key));
  return it->value;
}

Micros time_of(const rapidjson::Value& o, const char* key, const std::string& where) {
  const rapidjson::Value& v = member(o, key, where);
  if (!v.IsInt64() || v.GetInt64() < 0) throw Invalid(fmt::format("{}.{}: not a time (µs >= 0)", where, key));
  return v.GetInt64();
}

bool bool_of(const rapidjson::Value& o, const char* key, const std::string& where) {
  const rapidjson::Value& v = member(o, key, where);
  if (!v.IsBool()) throw Invalid(fmt::format("{}.{}: not true or false", where, key));
  return v.GetBool();
}

std::string_view string_of(const rapidjson::Value& o, const char* key, const std::string& where) {
  const rapidjson::Value& v = member(o, key, where);
  if (!v.IsString()) throw Invalid(fmt::format("{}.{}: not a string", where, key));
  return {v.GetString(), v.GetStringLength()};
}

HighstateRun highstate_of(const rapidjson::Value& o, const char* key, const std::string& where) {
  const rapidjson::Value& v = member(o, key, where);
  const std::string at = where + "." + key;
  if (!v.IsObject()) throw Invalid(at + ": not an object");
  HighstateRun run;
  run.at = time_of(v, "at", at);
  run.jid = string_of(v, "jid", at);
  run.succeeded = bool_of(v, "succeeded", at);
  run.test = bool_of(v, "test", at);
  if (run.at == 0 && !run.jid.empty()) throw Invalid(at + ": a jid without a time");
  return run;
}

void write_highstate(json::Writer& w, const char* key, const HighstateRun& run) {
  json::key(w, key);
  w.StartObject();
  json::key(w, "at"), w.Int64(run.at);
  json::key(w, "jid"), json::string(w, run.jid);
  json::key(w, "succeeded"), w.Bool(run.succeeded);
  json::key(w, "test"), w.Bool(run.test);
  w.EndObject();
}

std::uint32_t count_of(const rapidjson::Value& o, const char* key, const std::string& where) {
  const rapidjson::Value& v = member(o, key, where);
  if (!v.IsUint()) throw Invalid(fmt::format("{}.{}: not a count", where, key));
  return v.GetUint();
}

MinionEntity entity_of(const rapidjson::Value& o, const std::string& where, int version, Micros saved_blind) {
  MinionEntity m;
  m.last_heard = time_of(o, "last_heard", where);
  m.blind_at_heard = time_of(o, "blind_at_heard", where);
  const auto via = parse_heard_via(string_of(o, "via", where));
  if (!via) throw Invalid(where + ".via: unknown");
  m.via = *via;
  m.last_connected = time_of(o, "last_connected", where);
  m.blind_at_connected = time_of(o, "blind_at_connected", where);
  m.connected = bool_of(o, "connected", where);
  m.expected = bool_of(o, "expected", where);
  m.expected_since = time_of(o, "expected_since", where);
  m.blind_at_expected = time_of(o, "blind_at_expected", where);
  m.silent_since = time_of(o, "silent_since", where);
  m.detected_at = time_of(o, "detected_at", where);
  m.window = time_of(o, "window", where);
  const auto liveness = parse_liveness(string_of(o, "liveness", where));
  if (!liveness) throw Invalid(where + ".liveness: unknown");
  m.liveness = *liveness;
  if (version >= 2) {
    m.last_highstate = highstate_of(o, "last_highstate", where);
    m.last_successful_highstate = highstate_of(o, "last_successful_highstate", where);
    m.indexed_version = time_of(o, "indexed_version", where);
  }
  if (version >= 3) {
    m.blind_at_success = time_of(o, "blind_at_success", where);
    m.enforced_at = time_of(o, "enforced_at", where);
    m.enforced_failed_states = count_of(o, "enforced_failed_states", where);
    m.watched_since = time_of(o, "watched_since", where);
    m.blind_at_watched = time_of(o, "blind_at_watched", where);
    m.stale_since = time_of(o, "stale_since", where);
    m.stale_detected_at = time_of(o, "stale_detected_at", where);
    m.stale_window = time_of(o, "stale_window", where);
    const auto freshness = parse_freshness(string_of(o, "freshness", where));
    if (!freshness) throw Invalid(where + ".freshness: unknown");
    m.freshness = *freshness;
    if (m.stale_since != 0 && (m.stale_window == 0 || m.stale_detected_at == 0))
      throw Invalid(where + ": a stale episode without its window or detection time");
  } else {
    m.blind_at_success = saved_blind;
    // The last run, when it enforced, is the last enforcing one; its failed states were not kept.
    if (m.last_highstate.at != 0 && !m.last_highstate.test) {
      m.enforced_at = m.last_highstate.at;
      m.enforced_failed_states = m.last_highstate.succeeded ? 0 : 1;
    }
  }
  return m;
}

}  // namespace

std::string encode_fleet_state(const FleetSnapshot& s) {
  std::string out;
  json::StringOut os{out};
  json::Writer w(os);
  w.StartObject();
  json::key(w, "format"), json::string(w, kFormat);
  json::key(w, "version"), w.Int(kVersion);
  json::key(w, "saved_at"), w.Int64(s.saved_at);
  json::key(w, "blind_total"), w.Int64(s.blind_total);
  json::key(w, "keys_known"), w.Bool(s.keys_known);
  json::key(w, "minions");
  w.StartArray();
  for (const auto& [id, m] : s.minions) {
    w.StartObject();
    json::key(w, "id"), json::string(w, id);
    json::key(w, "last_heard"), w.Int64(m.last_heard);
    json::key(w, "blind_at_heard"), w.Int64(m.blind_at_heard);
    json::key(w, "via"), json::string(w, to_string(m.via));
    json::key(w, "last_connected"), w.Int64(m.last_connected);
    json::key(w, "blind_at_connected"), w.Int64(m.blind_at_connected);
    json::key(w, "connected"), w.Bool(m.connected);
    json::key(w, "expected"), w.Bool(m.expected);
    json::key(w, "expected_since"), w.Int64(m.expected_since);
    json::key(w, "blind_at_expected"), w.Int64(m.blind_at_expected);
    json::key(w, "silent_since"), w.Int64(m.silent_since);
    json::key(w, "detected_at"), w.Int64(m.detected_at);
    json::key(w, "window"), w.Int64(m.window);
    json::key(w, "liveness"), json::string(w, to_string(m.liveness));
    write_highstate(w, "last_highstate", m.last_highstate);
    write_highstate(w, "last_successful_highstate", m.last_successful_highstate);
    json::key(w, "indexed_version"), w.Int64(m.indexed_version);
    json::key(w, "blind_at_success"), w.Int64(m.blind_at_success);
    json::key(w, "enforced_at"), w.Int64(m.enforced_at);
    json::key(w, "enforced_failed_states"), w.Uint(m.enforced_failed_states);
    json::key(w, "watched_since"), w.Int64(m.watched_since);
    json::key(w, "blind_at_watched"), w.Int64(m.blind_at_watched);
    json::key(w, "stale_since"), w.Int64(m.stale_since);
    json::key(w, "stale_detected_at"), w.Int64(m.stale_detected_at);
    json::key(w, "stale_window"), w.Int64(m.stale_window);
    json::key(w, "freshness"), json::string(w, to_string(m.freshness));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  out.push_back('\n');
  return out;
}

Result<FleetSnapshot, std::string> decode_fleet_state(std::string_view text) {
  if (text.size() > kMaxFleetStateBytes) return std::string("larger than any fleet state file salttap writes");
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (doc.HasParseError()) return fmt::format("not JSON (at byte {})", doc.GetErrorOffset());
  try {
    if (!doc.IsObject()) throw Invalid("not a JSON object");
    if (string_of(doc, "format", "state") != kFormat) throw Invalid("state.format: not a fleet state file");
    const rapidjson::Value& version = member(doc, "version", "state");
    if (!version.IsInt() || version.GetInt() < kOldestVersion || version.GetInt() > kVersion)
      throw Invalid("state.version: not a version this salttap reads");
    FleetSnapshot s;
    s.saved_at = time_of(doc, "saved_at", "state");
    s.blind_total = time_of(doc, "blind_total", "state");
    s.keys_known = bool_of(doc, "keys_known", "state");
    const rapidjson::Value& minions = member(doc, "minions", "state");
    if (!minions.IsArray()) throw Invalid("state.minions: not a list");
    s.minions.reserve(minions.Size());
    for (rapidjson::SizeType i = 0; i < minions.Size(); ++i) {
      const std::string where = fmt::format("state.minions[{}]", i);
      if (!minions[i].IsObject()) throw Invalid(where + ": not an object");
      const std::string_view id = string_of(minions[i], "id", where);
      if (id.empty()) throw Invalid(where + ".id: empty");
      if (!s.minions.empty() && id <= s.minions.back().first) throw Invalid(where + ".id: not sorted and unique");
      s.minions.emplace_back(std::string(id), entity_of(minions[i], where, version.GetInt(), s.blind_total));
    }
    return s;
  } catch (const Invalid& e) {
    return std::string(e.what());
  }
}

}  // namespace salttap::fleet
