#pragma once
// The checkpoint file's bytes (docs/checkpoint.md): a fixed header (magic,
// format version, payload length, zlib crc32 of the payload) and the
// correlator's snapshot as one msgpack value. Pure: no I/O, so the fuzz
// target and the unit tests drive the decoder directly.
//
// The decoder trusts nothing: a short file, another magic, a version this
// build does not know, a crc that does not match, or a payload that is not
// exactly the documented shape (types, enum ranges, minion ids inside the
// name table, sorted minion lists) is an error with its reason, never a crash
// and never a half-restored snapshot. Job counters are not stored: they are
// recounted from the minion flags, so they cannot disagree with them.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "correlator/correlator_snapshot.h"

namespace salttap::recovery {

inline constexpr std::string_view kCheckpointMagic = "STAPCKPT";
// Version 2 adds settled jobs in compact form (loads, details, settled);
// version 1 files (every job whole) are still read.
inline constexpr std::uint32_t kCheckpointVersion = 2;
inline constexpr std::uint32_t kCheckpointVersionFirst = 1;
inline constexpr std::size_t kCheckpointHeaderBytes = 20;  // magic 8, version 4, length 4, crc32 4

// Why a checkpoint was not restored; the label values of
// salttap_correlator_checkpoint_restore_errors_total.
enum class CheckpointError : std::uint8_t { unreadable, truncated, bad_magic, unknown_version, bad_crc, invalid };
inline constexpr std::size_t kCheckpointErrors = 6;
std::string_view to_string(CheckpointError e);

struct DecodedCheckpoint {
  Micros written_at = 0;
  correlator::CorrelatorSnapshot snapshot;  // whole
};

struct CheckpointFailure {
  CheckpointError kind;
  std::string why;  // in words, for the log
};

std::string encode_checkpoint(const correlator::CorrelatorSnapshot& snapshot, Micros written_at);
Result<DecodedCheckpoint, CheckpointFailure> decode_checkpoint(std::string_view bytes);

}  // namespace salttap::recovery
