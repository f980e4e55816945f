#pragma once
// MinionRegistry interns minion ids (a 10,000-minion job stores 4-byte ids,
// not strings) and keeps what the bus says about each minion: when it was
// last seen (any event from it), last started, last authenticated.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "common/clock.h"

namespace salttap::correlator {

using MinionId = std::uint32_t;

struct MinionFacts {
  Micros last_seen = 0;   // last event from the minion (a presence `lost` list is not one)
  Micros last_start = 0;  // salt/minion/<id>/start or minion_start
  Micros last_auth = 0;   // salt/auth
  bool present = false;   // in the last salt/presence/present list
};

class MinionRegistry {
 public:
  MinionId intern(std::string_view name);
  const std::string& name(MinionId id) const { return names_[id]; }
  std::size_t size() const { return names_.size(); }

  MinionFacts& facts(MinionId id) { return facts_[id]; }
  const MinionFacts& facts(MinionId id) const { return facts_[id]; }

  // Heap bytes held (for the memory benchmark and metrics).
  std::size_t memory_bytes() const;

 private:
  // Every return looks its minion up here: an open-addressing table (Abseil's
  // SwissTable) costs about one cache miss where a node-based map cost several.
  absl::flat_hash_map<std::string, MinionId> ids_;
  std::vector<std::string> names_;
  std::vector<MinionFacts> facts_;
};

}  // namespace salttap::correlator
