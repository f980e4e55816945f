#include "alerting/internal/system_alert.h"

namespace salttap::alerting {

void start_system_alert(json::Writer& w, correlator::AlertKind kind, std::string_view master_id, Micros now) {
  w.StartObject();
  w.Key("alert"), json::string(w, to_string(kind));
  w.Key("kinds");
  w.StartArray();
  json::string(w, to_string(kind));
  w.EndArray();
  if (!master_id.empty()) w.Key("master"), json::string(w, master_id);
  w.Key("settled_at"), json::string(w, format_utc(now));
}

}  // namespace salttap::alerting
