#pragma once
// The opening every alert about salttap itself carries (a spool or the tap
// journal full: one kind, no job), so that its document reads like a job
// alert's where they share fields: alert, kinds, master (when set), settled_at.

#include <string_view>

#include "common/clock.h"
#include "common/json_writer.h"
#include "correlator/alert.h"

namespace salttap::alerting {

// Starts the alert's JSON object in `w` with the shared fields; the caller
// adds its own and closes the object.
void start_system_alert(json::Writer& w, correlator::AlertKind kind, std::string_view master_id, Micros now);

}  // namespace salttap::alerting
