#pragma once
// What one `salt/job/<jid>/ret/<minion>` says, computed rather than trusted
// (docs/salt-event-bus.md §6.3-6.5): `success` is unreliable for state runs, and
// a failed highstate is only visible in its states' `result`s.
//
// A return is failed when any of these holds:
//   retcode != 0 (any element, for multi-function jobs)     "retcode N"
//   success: false                                          "success false"
//   a state with result: false                              "N of M states failed"
//   a state function returning a list of strings            "render/compile error: <first line>"
//   a string return "... is not available"                  "function not available"
// result: null (test=True) counts as "would change", never as failure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <msgpack.hpp>

namespace salttap::correlator {

struct StateCounts {
  std::uint64_t total = 0;
  std::uint64_t succeeded = 0;
  std::uint64_t failed = 0;
  std::uint64_t changed = 0;
  std::uint64_t would_change = 0;
  StateCounts& operator+=(const StateCounts& o);
  bool operator==(const StateCounts&) const = default;
};

// One failed state, as values (never as field names: state IDs are unbounded).
struct FailedState {
  std::string id;        // __id__
  std::string name;      // name
  std::string function;  // e.g. "cmd.run" (state module + function)
  std::string comment;
  std::int64_t run_num = 0;  // __run_num__: execution order
  bool operator==(const FailedState&) const = default;
};

struct ReturnAnalysis {
  bool failed = false;
  std::string reason;  // first reason, when failed
  std::optional<std::int64_t> retcode;
  bool state_run = false;  // the return is a state result dict (or a state render error)
  StateCounts states;
  std::vector<FailedState> failed_states;  // ordered by run_num, at most max_failed_states
};

// `data` is the ret event's data map.
ReturnAnalysis analyze_return(const msgpack::object& data, std::size_t max_failed_states = 50);

}  // namespace salttap::correlator
