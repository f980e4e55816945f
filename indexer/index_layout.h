#pragma once
// Index names and template settings shared by the document builder (which
// names each document's index) and the setup code (which installs templates
// for the same names). Layout reference: docs/documents.md.

#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace salttap::indexer {

// The kinds of index salttap writes, in template order.
inline constexpr std::string_view kIndexKinds[] = {"jobs", "returns", "states", "events", "alerts", "deadletter"};
// Entity indices: one document per thing, replaced in place; no date suffix
// and no retention policy (a minion quiet for a month is still a minion).
inline constexpr std::string_view kEntityKinds[] = {"minions"};
bool is_entity_kind(std::string_view kind);

struct IndexLayout {
  std::string prefix = "salt";
  bool index_date = true;  // the returner's `index_date`: suffix -YYYY.MM.DD
  // "<prefix>-<kind>-YYYY.MM.DD" for the UTC day of `t` (no suffix without index_date).
  std::string index_name(std::string_view kind, Micros t) const;
  // "<prefix>-<kind>": an entity index.
  std::string entity_index(std::string_view kind) const;
  // "<prefix>-<kind>-*" or "<prefix>-<kind>" without index_date or for an entity kind.
  std::string index_pattern(std::string_view kind) const;
};

// The time that names a job's indices (jobs, returns, states, alerts): its
// jid's (the master's clock at publish), else its start. The live stream
// (start: the `new` event's `_stamp`) and the job cache (start: the jid)
// then agree on the day, so a job's documents never land twice in indices
// of two days around midnight.
Micros job_index_time(std::string_view jid, Micros started_at);

struct TemplateSettings {
  int number_of_shards = 1;  // the returner's defaults
  int number_of_replicas = 0;
  std::optional<int> retention_days;  // ILM (Elasticsearch) / ISM (OpenSearch) delete after N days
  // index.refresh_interval ("500ms", "1s", ...); empty: the engine's own
  // (1 s). It bounds how soon a shipped document is searchable.
  std::string refresh_interval;
  // The jobs index's own: one small document per job, what alerts, the job
  // browser and `salttap jobs` read first, so searchable sooner than the
  // returns and events that make up the volume. Unset: refresh_interval when
  // that is set, else kJobsRefreshInterval. Empty: the engine's own.
  std::optional<std::string> jobs_refresh_interval;
  int template_priority = 200;  // above the engines' built-ins (100)

  // index.refresh_interval for the templates of `kind`; empty: leave it to the engine.
  [[nodiscard]] std::string refresh_interval_for(std::string_view kind) const;
};

// With the engine's 1 s a settled job waits half a second on average for
// the next refresh; at 500 ms a quarter, for one more small segment a
// second on an index that gets two writes per job.
inline constexpr std::string_view kJobsRefreshInterval = "500ms";

}  // namespace salttap::indexer
