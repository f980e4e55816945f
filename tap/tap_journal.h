#pragma once
// TapJournal: where the bus reader puts frames the in-memory EventQueue has
// no room for, so a burst costs disk, not events (docs/tap-journal.md).
//
// The reader thread appends RAW frames (no decoding, no waiting on the
// consumer: a buffered append and one write() per read of the socket);
// the consumer drains them in order and decodes them there. Once anything
// is in the journal, later frames go to it too until it is drained, so
// events stay in bus order (EventQueue::pop_all and tap/internal/spill_gate.h
// keep that promise; this class only keeps records in order).
//
// Files: <dir>/seg-<20 digits>, append-only segments of CRC-checked records
// (tap/internal/journal_format.h), and <dir>/lock, held while open
// (common/dir_lock.h: a second salttap is refused, naming the first).
// A segment is deleted once drained. Records left by a previous run are
// drained first. A corrupt record is logged and counted, and the rest of its
// segment skipped; nothing here throws after construction. When max_bytes is
// reached or a write fails (ENOSPC, EIO), frames are refused and counted:
// one "refusal episode" lasts until the journal has drained empty.
//
// Threads: one writer (append, flush) and one consumer (drain,
// finish_if_drained); everything else from anywhere.

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/dir_lock.h"

namespace salttap::tap {

// What a journal record holds.
enum class JournalRecordKind : std::uint8_t {
  frame = 1,  // one {"head", "body"} map of the pub socket (stream readers)
  body = 2,   // one bare event body: a ZeroMQ message (Salt 2015.x)
};

struct JournalConfig {
  std::filesystem::path dir;                      // created if missing
  std::uint64_t max_bytes = 2ull << 30;           // records on disk, header included
  std::uint64_t segment_bytes = 16ull << 20;      // a new segment past this; drained ones are deleted
  std::uint64_t max_record_bytes = 128ull << 20;  // larger records are corrupt (the decode limit)
};

struct JournalStats {
  std::uint64_t bytes = 0;   // on disk, not yet drained
  std::uint64_t frames = 0;  // records on disk, not yet drained
  std::uint64_t segments = 0;
  std::uint64_t spilled_frames = 0;  // written since start
  std::uint64_t spilled_bytes = 0;
  std::uint64_t drained_frames = 0;    // handed to the consumer since start
  std::uint64_t recovered_frames = 0;  // found at start, left by the previous run
  std::uint64_t dropped_full = 0;      // frames refused: max_bytes reached
  std::uint64_t dropped_error = 0;     // frames lost to a failed open or write
  std::uint64_t dropped_bytes = 0;
  std::uint64_t write_errors = 0;
  std::uint64_t corrupt_records = 0;  // bad records met while draining (each ends its segment)
  std::uint64_t corrupt_bytes = 0;    // bytes skipped with them
  std::uint64_t refusal_episodes = 0;
  bool refusing = false;           // in a refusal episode now
  bool refused_for_error = false;  // the episode's first refusal was a failed write
};

class JournalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class TapJournal {
 public:
  // Creates and locks `config.dir` and takes stock of what a previous run
  // left. Throws JournalError (not a directory, not writable, locked).
  explicit TapJournal(JournalConfig config);
  ~TapJournal();
  TapJournal(const TapJournal&) = delete;
  TapJournal& operator=(const TapJournal&) = delete;

  const JournalConfig& config() const { return config_; }

  // True while records wait or a spill has not been drained to its end:
  // the reader must send new frames here too.
  bool active() const;
  // Something for the consumer: flushed records, or an empty active journal
  // to finish.
  bool readable() const;
  JournalStats stats() const;

  // ---- the reader thread ----
  enum class Append : std::uint8_t { ok, full, error };
  // Buffers one record; flush() writes it. full / error: refused and counted.
  Append append(JournalRecordKind kind, std::string_view payload);
  // Writes what append() buffered (one write per segment touched). Returns
  // how many frames a failed write lost (counted; the file is cut back).
  std::uint64_t flush();

  // ---- the consumer ----
  using RecordSink = std::function<void(JournalRecordKind, std::string_view payload)>;
  // Hands over the oldest flushed records, up to max_records or (about)
  // max_bytes, in order; the payload view is valid during the call only.
  // Returns how many were handed over.
  std::size_t drain(std::size_t max_records, std::size_t max_bytes, const RecordSink& sink);
  // When every record has been drained and nothing waits in the writer's
  // buffer: the journal is empty and inactive again, its files removed.
  bool finish_if_drained();

 private:
  struct Segment {
    std::uint64_t seq = 0;
    std::uint64_t size = 0;    // flushed bytes
    std::uint64_t frames = 0;  // flushed records not yet drained
    bool sealed = false;       // the writer has moved on
  };

  void recover();
  std::filesystem::path segment_path(std::uint64_t seq) const;
  bool open_segment();                                                       // writer: a new tail segment
  void note_refusal(bool error, std::uint64_t frames, std::uint64_t bytes);  // under mutex_
  void close_reader();

  JournalConfig config_;
  std::optional<DirLock> lock_;

  mutable std::mutex mutex_;
  std::deque<Segment> segments_;  // oldest first
  JournalStats stats_;
  std::uint64_t buffered_frames_ = 0;  // appended, not yet flushed
  bool active_ = false;
  bool writer_reset_ = false;  // the consumer removed the files: the writer starts a new segment
  std::uint64_t next_seq_ = 1;

  // writer only
  int wfd_ = -1;
  std::uint64_t wseq_ = 0;
  std::uint64_t wsize_ = 0;  // flushed bytes of the tail segment
  std::string wbuf_;
  std::uint64_t wbuf_frames_ = 0;
  std::uint64_t wbuf_bytes_ = 0;  // payload bytes in wbuf_ (the frames' own size)
  std::chrono::steady_clock::time_point last_refusal_log_{};
  std::uint64_t refused_since_log_ = 0;

  // consumer only
  int rfd_ = -1;
  std::uint64_t rseq_ = 0;
  std::uint64_t roff_ = 0;  // next unread byte of the head segment
  std::string rbuf_;
  std::uint64_t corrupt_logged_ = 0;
};

}  // namespace salttap::tap
