#pragma once
// What `run` knows about its own coverage of the bus, kept across restarts
// in the spool directory (docs/backfill.md#reconcile-at-start): until when
// the bus was tapped without a gap, and when the oldest job then still open
// began. The next start reconciles the job cache from the earlier of the
// two (less an overlap) to now; without the file, the whole cache.
//
// A small text file, written atomically (common/atomic_file.h: temporary
// file, fdatasync, rename, fsync of the directory) through the state-file
// seam (common/state_filesystem.h):
//
//   salttap-reconcile 1
//   live_until <µs since the epoch>
//   open_since <µs since the epoch, or ->
//   open <jid>                 one line per job open at live_until
//   open_truncated             instead of the rest, past kMaxOpenJids
//
// The open jobs let the next start tell a job the last run settled (left
// alone) from one it never settled (read again), so a restart neither
// repeats a verdict nor its alerts. A file that does not parse is reported
// (the caller logs it and reconciles the whole cache: documents already
// indexed are 409s).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/result.h"
#include "common/state_filesystem.h"

namespace salttap::recovery {

inline constexpr std::size_t kMaxOpenJids = 100'000;

struct ReconcileState {
  Micros live_until = 0;             // the bus was tapped live, without a gap, until here
  std::optional<Micros> open_since;  // the oldest job open at live_until began here
  std::vector<std::string> open;     // the jids of the jobs open at live_until
  bool open_truncated = false;       // more were open than `open` holds
  bool operator==(const ReconcileState&) const = default;
};

std::string format_reconcile_state(const ReconcileState& state);
// nullopt and `error` saying what is wrong.
[[nodiscard]] std::optional<ReconcileState> parse_reconcile_state(std::string_view text, std::string& error);

class ReconcileStateFile {
 public:
  explicit ReconcileStateFile(std::filesystem::path path, StateFilesystem& fs = posix_state_filesystem());

  enum class Read { found, absent, bad };
  // `error` names the path and why for `bad` (unreadable or unparsable). A
  // temporary file a crash left in the middle of a write is removed.
  Read read(ReconcileState& state, std::string& error);
  // The step that failed, if one did; the record before it is kept whole.
  [[nodiscard]] Result<void, FileError> write(const ReconcileState& state);

  const std::filesystem::path& path() const { return file_.path(); }

 private:
  AtomicFile file_;
};

}  // namespace salttap::recovery
