#pragma once
// One minion as the fleet sees it. Every time is event time (the event's
// _stamp, else its arrival), so a journal drain or a backlog is judged by
// when the minion spoke, not when salttap got round to it. Beside each time
// is the blind total (blind_clock.h) as it stood then.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace salttap::fleet {

// What the minion last said: it spoke (a return, find_job answers included,
// progress, start, accepted auth, a beacon, a refresh request).
enum class HeardVia : std::uint8_t { none, ret, find_job, progress, start, auth, beacon, refresh };
std::string_view to_string(HeardVia via);
std::optional<HeardVia> parse_heard_via(std::string_view text);

// ok: heard within its window; silent: an episode is open; never_heard:
// expected, nothing heard yet, still inside its first window; ignored: no
// rule watches it (or `ignore: true`).
enum class Liveness : std::uint8_t { ok, silent, never_heard, ignored };
inline constexpr std::size_t kLivenessStates = 4;
std::string_view to_string(Liveness liveness);
std::optional<Liveness> parse_liveness(std::string_view text);

// Whether the minion's configuration was enforced lately (fleet.highstate):
// fresh: its last successful enforcing full highstate is within its window;
// stale: it is not (or, with highstate_alert_never, none came within one
// window of joining); never: no successful one yet; unwatched: no rule
// watches it.
enum class Freshness : std::uint8_t { fresh, stale, never, unwatched };
inline constexpr std::size_t kFreshnessStates = 4;
std::string_view to_string(Freshness freshness);
std::optional<Freshness> parse_freshness(std::string_view text);

// One full highstate run (correlator/run_kind.h) as the minion returned it.
struct HighstateRun {
  Micros at = 0;  // the return's time; 0: none yet
  std::string jid;
  bool succeeded = false;  // salttap's computed status (correlator/return_analysis.h), not Salt's `success`
  bool test = false;       // test=True: a dry run, never a "last successful" one
  bool operator==(const HighstateRun&) const = default;
};

// What the last entity document said (entity_document.h), for deciding
// whether the entity changed enough to write another.
struct EntityMark {
  bool written = false;
  bool connected = false;
  bool expected = false;
  bool keys_known = false;
  std::uint8_t liveness = 0;
  Micros last_heard = 0;
  Micros silent_since = 0;
  Micros highstate_at = 0;
  Micros successful_highstate_at = 0;
  std::uint8_t freshness = 0;
  Micros stale_since = 0;
  bool operator==(const EntityMark&) const = default;
};

struct MinionEntity {
  Micros last_heard = 0;  // the minion spoke
  Micros blind_at_heard = 0;
  Micros last_connected = 0;  // in a presence list (heard about, from the master)
  Micros blind_at_connected = 0;
  Micros expected_since = 0;  // joined the expected fleet: the first window of grace runs from here
  Micros blind_at_expected = 0;
  Micros silent_since = 0;  // the open episode's start (the last activity); 0: none
  Micros detected_at = 0;   // when the open episode was opened
  Micros window = 0;        // the open episode's window
  HeardVia via = HeardVia::none;
  Liveness liveness = Liveness::never_heard;  // as of the last sweep
  bool connected = false;
  bool expected = false;                   // in the expected fleet
  HighstateRun last_highstate;             // the newest full highstate, either mode
  HighstateRun last_successful_highstate;  // the newest enforcing one that succeeded
  Micros blind_at_success = 0;             // the blind total when it ran
  // The newest enforcing full highstate, either result: its time and how
  // many states failed (a failure without a failed state, a render error,
  // counts 1), so 0 means it succeeded.
  Micros enforced_at = 0;
  std::uint32_t enforced_failed_states = 0;
  // Highstate freshness (fleet.highstate): since when a rule watches it (a
  // minion never successful gets one window from here), the open stale
  // episode (its since: the last successful highstate, or the start of the
  // watch when none; 0: none), and the judgement of the last sweep.
  Micros watched_since = 0;
  Micros blind_at_watched = 0;
  Micros stale_since = 0;
  Micros stale_detected_at = 0;
  Micros stale_window = 0;
  Freshness freshness = Freshness::unwatched;
  // The entity index: the last document's external version (saved, so a
  // restart's versions keep growing) and what it said (not saved: after a
  // restart every minion is written once).
  std::int64_t indexed_version = 0;
  EntityMark indexed;
};

}  // namespace salttap::fleet
