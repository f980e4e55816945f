#pragma once
// One minion's document in the `<prefix>-minions` entity index
// (docs/fleet.md): what the fleet knows of it now, one document per minion,
// `_id` `<master>/<minion>`, replaced whole at every write. The version is
// external and grows with the entity's own event times, so a restart or the
// twin of an HA pair writing the same minion converges on the newest word
// (the engine answers 409 to an older one) instead of flapping.
//
// The fleet renders the source object; the indexer adds `@timestamp`, the
// salttap metadata and the action line (no fleet types in indexer/).

#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "fleet/minion_entity.h"

namespace salttap::fleet {

struct EntityDoc {
  std::string minion;
  std::int64_t version = 0;  // external; > 0
  Micros updated_at = 0;     // the document's @timestamp: the newest change it carries
  std::string json;          // the source object without @timestamp and salttap.*
};

// accepted, unaccepted (heard, its key not among the accepted ones),
// unknown (the keys cannot be read), deleted (its key was deleted or rejected).
std::string_view key_state(const MinionEntity& m, bool keys_known);

EntityDoc entity_document(std::string_view master, std::string_view minion, const MinionEntity& m,
                          std::string_view key_state, std::int64_t version, Micros updated_at);

}  // namespace salttap::fleet
