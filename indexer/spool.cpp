// The disk spool (docs/spool.md).
//
// Four mutexes:
//   write_mu   the writer: the open segment, the staged batch, its syncs (append, close)
//   read_mu    the reader: the read cursor and the file it reads (take)
//   ledger_mu  the ledger file (write_ledger)
//   mu         what they all share: the segment list, ids, acks, counters, the waits
// write_mu, read_mu and ledger_mu are never held together, so no order among
// them is needed; mu is always taken last, inside any of them. No read,
// write, sync, rename or unlink runs under mu (segments to delete are queued
// under it and unlinked after), so a slow fdatasync delays neither take()
// nor ack().
#include "indexer/spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "common/access_advice.h"
#include "common/atomic_file.h"
#include "common/dir_lock.h"
#include "common/errno_text.h"
#include "common/log.h"
#include "indexer/internal/spool_format.h"

namespace salttap::indexer {

std::string_view to_string(DropReason r) {
  switch (r) {
    case DropReason::full:
      return "full";
    case DropReason::timed_out:
      return "timed_out";
    case DropReason::too_large:
      return "too_large";
    case DropReason::io_error:
      return "io_error";
  }
  return "unknown";
}

namespace {

namespace fs = std::filesystem;
namespace sf = spool_format;
using TimePoint = SteadyTime::time_point;
using Duration = SteadyTime::duration;

// A stale ledger only means resends (absorbed as 409s), so ack progress is
// written at most this often; segment deletions and close() write at once.
// After a failed ledger write, retries come at the same pace.
constexpr auto kLedgerInterval = std::chrono::milliseconds(100);
// The staging buffer is reused between appends unless a huge batch grew it.
constexpr std::size_t kKeepStagingBytes = 8u << 20;
constexpr const char* kLedgerName = "ledger";
constexpr const char* kLedgerTmpName = "ledger.tmp";
constexpr const char* kDeadDir = "dead";

std::size_t index(DocClass c) { return static_cast<std::size_t>(c); }

// A descriptor from a StateFilesystem, closed through it.
class Fd {
 public:
  Fd() = default;
  Fd(StateFilesystem& files, int fd) : files_(&files), fd_(fd) {}
  Fd(Fd&& o) noexcept : files_(o.files_), fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      files_ = o.files_;
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd_ >= 0) files_->close(fd_);
    fd_ = -1;
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  StateFilesystem* files_ = nullptr;
  int fd_ = -1;
};

// 0, or the errno of the failed open.
int open_file(StateFilesystem& files, const fs::path& path, int flags, Fd& out) {
  int fd = -1;
  if (const int e = files.open(path, flags, fd); e != 0) return e;
  out = Fd(files, fd);
  return 0;
}

// 0, or the errno of the write that failed (after any short writes).
int write_all(StateFilesystem& files, int fd, std::span<const char> data) {
  while (!data.empty()) {
    std::size_t written = 0;
    if (const int e = files.write(fd, data, written); e != 0) return e;
    if (written == 0) return EIO;  // a regular file never does this; do not spin on it
    data = data.subspan(std::min(written, data.size()));
  }
  return 0;
}

// A new file or a rename is durable only once its directory is synced.
int sync_dir(StateFilesystem& files, const fs::path& dir) {
  Fd fd;
  if (const int e = open_file(files, dir, O_RDONLY | O_DIRECTORY, fd); e != 0) return e;
  return files.sync(fd.get());
}

class FdSource final : public sf::ByteSource {
 public:
  FdSource(StateFilesystem& files, int fd, fs::path path) : files_(files), fd_(fd), path_(std::move(path)) {}
  std::size_t read_at(std::uint64_t offset, std::span<unsigned char> out) override {
    std::size_t done = 0;
    while (done < out.size()) {
      std::size_t n = 0;
      if (const int e = files_.read_at(fd_, offset + done, out.subspan(done), n); e != 0)
        throw SpoolError(fmt::format("cannot read {}: {}", path_.string(), errno_text(e)));
      if (n == 0) break;
      done += n;
    }
    return done;
  }

 private:
  StateFilesystem& files_;
  int fd_;
  fs::path path_;
};

struct Hole {
  std::uint64_t begin = 0, end = 0;
};

struct Segment {
  std::uint64_t name_id = 0;  // seg-<name_id>: orders the files
  std::uint64_t bytes = 0;    // whole records written: what the reader may read
  std::uint64_t records = 0;
  std::uint64_t first_id = 0, last_id = 0;
  std::vector<Hole> holes;  // corrupt runs found at recovery, stepped over by the reader
};

// A fully acknowledged segment whose file is still to be removed. Its bytes
// stay counted (they are on disk) until the unlink succeeds.
struct DoomedSegment {
  std::uint64_t name_id = 0;
  std::uint64_t bytes = 0;
  bool failed = false;  // an unlink of it failed already (logged once)
};

// Records lost in a corrupt run between two valid ids: the writer numbers
// records without gaps, so the gap says how many; at least one.
std::uint64_t lost_between(std::uint64_t prev_id, std::uint64_t next_id) {
  return prev_id != 0 && next_id > prev_id + 1 ? next_id - prev_id - 1 : 1;
}

}  // namespace

struct Spool::Impl {
  Impl(SpoolConfig c, SteadyTime& t, StateFilesystem& f);
  ~Impl();

  // --- construction ---
  void validate_config() const;
  void open_dir();
  void recover();

  // --- writer (write_mu held) ---
  bool reserve_space(DocClass cls, std::uint64_t size, TimePoint deadline, AppendResult& result);
  void stage(const BulkDoc& doc);
  void flush(AppendResult& result);
  void publish_staged(AppendResult& result);
  void discard_staged(const FileError& failure, AppendResult& result);
  FileError open_segment(std::uint64_t first_id);
  void close_segment();
  FileError sync_active();
  void sync_or_log();
  bool retire_active_if_acked();                                  // and mu held
  void drop(DocClass cls, DropReason why, AppendResult& result);  // and mu held
  void raise_full(DocClass cls, std::string_view what);           // and mu held

  // --- reader (read_mu held) ---
  std::vector<SpoolRecord> read_some(std::size_t max_records, std::size_t max_bytes);
  bool enter_segment(std::uint64_t min_name_id);

  // --- shared ---
  void write_ledger(bool force);
  FileError put_ledger(const sf::Ledger& ledger);                          // ledger_mu held
  void remove_doomed();                                                    // no lock but write_mu may be held
  void space_freed();                                                      // mu held
  bool ledger_retry_due() const { return ledger_due && !ledger_failing; }  // mu held
  TimePoint deadline_after(std::chrono::milliseconds wait) const;
  fs::path segment_path(std::uint64_t name_id) const { return dir / sf::segment_file_name(name_id); }
  std::uint64_t limit_for(DocClass cls) const;

  SpoolConfig config;
  SteadyTime& time;
  StateFilesystem& files;
  fs::path dir;
  std::string dir_name;             // for messages
  std::optional<DirLock> dir_lock;  // held while the spool is open
  RecoveryReport report;

  // --- shared state, under mu ---
  mutable std::mutex mu;
  std::condition_variable data_cv;      // takers: records appended, or closed
  std::condition_variable space_cv;     // the writer: ack progress, space freed, or closed
  std::uint64_t space_events = 0;       // bumped with each space_cv notification
  std::deque<Segment> segments;         // by name_id; the writer's is the last
  std::vector<DoomedSegment> doomed;    // acknowledged, their files not removed yet
  std::uint64_t active_id = 0;          // name_id of the segment the writer appends to (0: none)
  std::uint64_t highest_name_id = 0;    // new segment names go above every name used
  std::uint64_t bytes = 0;              // on disk: segments[].bytes and doomed[].bytes
  std::uint64_t committed_next_id = 1;  // the ledger's writer_next_id
  std::uint64_t untaken = 0;            // written, not yet handed out
  std::uint64_t taken_upto = 0;         // the last id handed out
  std::set<std::uint64_t> outstanding;  // handed out, not yet acked: bounded by the shipper's in-flight
  std::uint64_t acked_id = 0;           // every record <= it is acked
  bool closed = false;
  std::uint64_t take_wakeups = 0;       // wake_takers() calls: a taker waiting across one returns
  std::uint64_t take_wakeups_seen = 0;  // take_wakeups as a take() last returned (a later wake counts for the next)
  std::function<void()> data_listener;  // set_data_listener()
  SpoolStats counters;                  // the counting fields of stats()
  std::uint64_t ledger_acked_id = 0;    // as last written
  bool ledger_due = false;              // a segment was deleted (or a write failed) since the last ledger write
  bool ledger_failing = false;          // the last ledger write failed: retries are paced, logged once
  TimePoint last_ledger_write{};        // or the last attempt, when failing

  // --- writer, under write_mu ---
  std::mutex write_mu;
  Fd active_fd;
  std::uint64_t active_bytes = 0;  // == the active segment's bytes
  std::uint64_t next_id = 1;       // the id the next staged record gets
  std::string staged;              // encoded records not yet written
  std::uint64_t staged_first_id = 0, staged_last_id = 0, staged_records = 0;
  std::uint64_t staged_by_class[kDocClasses] = {};
  bool dirty = false;         // written since the last fdatasync
  bool dir_sync_due = false;  // a segment was created since the last directory sync
  TimePoint last_sync;        // or the last failed attempt

  // --- reader, under read_mu ---
  std::mutex read_mu;
  std::uint64_t read_segment = 0;  // name_id of the segment being read (0: none yet)
  std::uint64_t read_offset = 0;
  std::uint64_t last_read_id = 0;
  std::vector<Hole> read_holes;
  bool read_segment_last = true;  // no segment after it (yet)
  Fd read_fd;
  std::unique_ptr<FdSource> read_source;
  std::unique_ptr<sf::SegmentCursor> read_cursor;

  // --- ledger file, under ledger_mu ---
  std::mutex ledger_mu;
};

// ---------------------------------------------------------------------------
// Construction and recovery

Spool::Impl::Impl(SpoolConfig c, SteadyTime& t, StateFilesystem& f)
    : config(std::move(c)), time(t), files(f), dir(config.dir), dir_name(dir.string()), last_sync(time.now()) {
  validate_config();
  open_dir();
  recover();
  write_ledger(true);  // persist what recovery decided (rebuilt / clamped)
}

Spool::Impl::~Impl() = default;

void Spool::Impl::validate_config() const {
  if (config.dir.empty()) throw SpoolError("spool: no directory configured");
  if (config.max_bytes < sf::kHeaderBytes + 1) throw SpoolError("spool: max_bytes is too small");
  if (config.segment_bytes == 0) throw SpoolError("spool: segment_bytes must be > 0");
  const auto share_ok = [](double v) { return v > 0 && v <= 1; };
  if (!share_ok(config.events_limit) || !share_ok(config.states_limit))
    throw SpoolError("spool: events_limit and states_limit must be in (0, 1]");
}

void Spool::Impl::open_dir() {
  FileKind kind = FileKind::missing;
  if (const int e = files.kind_of(dir, kind); e != 0)
    throw SpoolError(access_advice(dir, e, "use the spool directory"));
  if (kind != FileKind::missing && kind != FileKind::directory)
    throw SpoolError(fmt::format("spool directory {} exists and is not a directory", dir_name));
  if (const int e = files.create_directories(dir); e != 0)
    throw SpoolError(access_advice(dir, e, "create the spool directory"));
  if (const int e = files.check_writable(dir); e != 0)
    throw SpoolError(access_advice(dir, e, "write to the spool directory"));

  auto taken = DirLock::take(dir, files);
  if (!taken) throw SpoolError(taken.error().text("spool"));
  dir_lock.emplace(std::move(taken).value());

  if (const int e = files.create_directories(dir / kDeadDir); e != 0)
    throw SpoolError(fmt::format("cannot create {}: {}", (dir / kDeadDir).string(), errno_text(e)));
}

namespace {

struct FoundSegment {
  std::uint64_t name_id = 0;
  fs::path path;
  std::uint64_t size = 0;
  sf::SegmentScan scan;
};

std::optional<sf::Ledger> read_ledger(StateFilesystem& files, const fs::path& path, bool& present) {
  Fd fd;
  const int e = open_file(files, path, O_RDONLY, fd);
  present = e != ENOENT;
  if (e != 0) return std::nullopt;
  std::array<unsigned char, sf::kLedgerBytes + 1> buf{};  // one more: a longer file is not a ledger
  FdSource source(files, fd.get(), path);
  const std::size_t n = source.read_at(0, buf);
  auto ledger = sf::decode_ledger(std::span(buf.data(), n));
  // Our writer keeps acked_id < writer_next_id, and ids far below 2^63.
  if (ledger && (ledger->acked_id >= ledger->writer_next_id || ledger->writer_next_id > sf::kMaxRecordId + 1))
    return std::nullopt;
  return ledger;
}

// The cut is synced (unless the policy syncs nothing): a torn tail that came
// back after a power loss would sit in an older segment, taken for corruption.
void truncate_or_throw(StateFilesystem& files, const fs::path& path, std::uint64_t size, bool sync) {
  Fd fd;
  int e = open_file(files, path, O_WRONLY, fd);
  if (e == 0) e = files.truncate(fd.get(), size);
  if (e == 0 && sync) e = files.sync_data(fd.get());
  if (e != 0) throw SpoolError(fmt::format("cannot truncate {} to {} bytes: {}", path.string(), size, errno_text(e)));
}

void remove_or_throw(StateFilesystem& files, const fs::path& path) {
  if (const int e = files.remove(path); e != 0 && e != ENOENT)
    throw SpoolError(fmt::format("cannot remove {}: {}", path.string(), errno_text(e)));
}

}  // namespace

void Spool::Impl::recover() {
  std::vector<FoundSegment> found;
  std::vector<DirectoryEntry> entries;
  if (const int e = files.list_directory(dir, entries); e != 0)
    throw SpoolError(fmt::format("cannot list spool directory {}: {}", dir_name, errno_text(e)));
  for (const auto& entry : entries) {
    const auto id = sf::parse_segment_file_name(entry.name);
    if (!id) {
      if (entry.name != kLedgerName && entry.name != kLedgerTmpName && entry.name != DirLock::kFileName &&
          entry.name != kDeadDir)
        log::debug("spool {}: ignoring {}", dir_name, entry.name);
      continue;
    }
    if (entry.kind != FileKind::regular) {
      log::warn("spool {}: ignoring {}: not a regular file", dir_name, entry.name);
      continue;
    }
    found.push_back(FoundSegment{*id, dir / entry.name, 0, {}});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.name_id < b.name_id; });

  bool ledger_present = false;
  const auto ledger = read_ledger(files, dir / kLedgerName, ledger_present);
  if (!ledger && ledger_present) log::warn("spool {}: ledger is damaged; rebuilding it from the segments", dir_name);

  // One pass over every record: verify, find bad runs, count what is pending.
  std::uint64_t prev_id = 0;
  const std::uint64_t after = ledger ? ledger->acked_id : 0;
  for (auto& seg : found) {
    Fd fd;
    if (const int e = open_file(files, seg.path, O_RDONLY, fd); e != 0)
      throw SpoolError(fmt::format("cannot open {}: {}", seg.path.string(), errno_text(e)));
    if (const int e = files.file_size(fd.get(), seg.size); e != 0)
      throw SpoolError(fmt::format("cannot read {}: {}", seg.path.string(), errno_text(e)));
    FdSource source(files, fd.get(), seg.path);
    sf::SegmentCursor cursor(source, seg.size);
    seg.scan = sf::scan_segment(cursor, prev_id, after);
    if (seg.scan.records > 0) prev_id = seg.scan.last_id;
  }
  std::uint64_t first_id = 0, last_id = 0;
  for (const auto& seg : found) {
    if (seg.scan.records == 0) continue;
    if (first_id == 0) first_id = seg.scan.first_id;
    last_id = seg.scan.last_id;
  }

  // Where acknowledgement stands.
  std::uint64_t acked = 0;
  if (ledger) {
    acked = ledger->acked_id;
    if (last_id != 0 && acked > last_id) {
      log::warn("spool {}: ledger acked_id {} is beyond the last record {} (segments removed?); clamping", dir_name,
                acked, last_id);
      acked = last_id;
      report.ledger_clamped = true;
    } else if (first_id != 0 && acked + 1 < first_id) {
      log::warn("spool {}: records {}..{} are missing (acked up to {}, first record {})", dir_name, acked + 1,
                first_id - 1, acked, first_id);
      acked = first_id - 1;
    }
  } else {
    acked = first_id != 0 ? first_id - 1 : 0;
    report.ledger_rebuilt = ledger_present || !found.empty();
  }

  // Repair: cut torn tails, note corrupt runs, drop what holds nothing pending.
  for (std::size_t i = 0; i < found.size(); ++i) {
    auto& seg = found[i];
    const bool last_segment = i + 1 == found.size();
    std::uint64_t next_segment_first = 0;
    for (std::size_t j = i + 1; j < found.size() && next_segment_first == 0; ++j)
      next_segment_first = found[j].scan.first_id;
    Segment kept{seg.name_id, seg.scan.valid_end, seg.scan.records, seg.scan.first_id, seg.scan.last_id, {}};
    for (const auto& bad : seg.scan.bad) {
      const std::uint64_t len = bad.end - bad.begin;
      // A crash mid-write leaves the writer's last segment with a partial
      // record, or one whose bytes never reached the disk: not data loss.
      if (bad.to_end() && last_segment && bad.found != sf::Probe::stale_id) {
        ++report.torn_tails;
        report.torn_bytes += len;
        log::warn("spool {}: torn tail in {}: truncating {} bytes at offset {} ({})", dir_name,
                  seg.path.filename().string(), len, bad.begin, sf::to_string(bad.found));
        continue;
      }
      const std::uint64_t lost = lost_between(bad.prev_id, bad.to_end() ? next_segment_first : bad.next_id);
      report.corrupt_records += lost;
      report.corrupt_bytes += len;
      log::error("spool {}: corrupt data in {} at offset {}: {} bytes ({}) skipped, about {} record(s) lost", dir_name,
                 seg.path.filename().string(), bad.begin, len, sf::to_string(bad.found), lost);
      if (!bad.to_end()) kept.holes.push_back(Hole{bad.begin, bad.end});
    }
    if (seg.scan.records == 0 || seg.scan.last_id <= acked) {
      remove_or_throw(files, seg.path);  // nothing valid, or all of it delivered
      continue;
    }
    if (seg.scan.valid_end < seg.size)
      truncate_or_throw(files, seg.path, seg.scan.valid_end, config.fsync != FsyncPolicy::never);
    if (segments.empty()) {  // the reader starts at the first record not yet acked
      read_segment = kept.name_id;
      read_offset = seg.scan.first_offset_after;
    }
    untaken += seg.scan.records_after;
    bytes += kept.bytes;
    highest_name_id = kept.name_id;
    segments.push_back(std::move(kept));
  }

  acked_id = ledger_acked_id = taken_upto = last_read_id = acked;
  std::uint64_t next = std::max(last_id, acked) + 1;
  if (ledger) next = std::max(next, ledger->writer_next_id);
  next_id = committed_next_id = next;
  report.pending_records = untaken;
  if (!segments.empty() || report.torn_tails || report.corrupt_records || report.ledger_rebuilt ||
      report.ledger_clamped)
    log::info("spool {}: recovered {} pending records in {} segments ({} bytes); acked up to {}", dir_name, untaken,
              segments.size(), bytes, acked_id);
}

// ---------------------------------------------------------------------------
// Writer

std::uint64_t Spool::Impl::limit_for(DocClass cls) const {
  const auto share = [&](double f) { return static_cast<std::uint64_t>(f * static_cast<double>(config.max_bytes)); };
  switch (cls) {
    case DocClass::event:
      return share(config.events_limit);
    case DocClass::state:
      return share(config.states_limit);
    default:
      return config.max_bytes;
  }
}

TimePoint Spool::Impl::deadline_after(std::chrono::milliseconds wait) const {
  // milliseconds::max() means "as long as it takes"; keep the sum in range.
  constexpr auto kForever = std::chrono::hours(24 * 365);
  return time.now() + std::min<std::chrono::milliseconds>(std::max(wait, std::chrono::milliseconds(0)), kForever);
}

void Spool::Impl::drop(DocClass cls, DropReason why, AppendResult& result) {
  ++counters.dropped[index(cls)];
  ++counters.dropped_by_reason[static_cast<std::size_t>(why)][index(cls)];
  ++result.dropped;
  if (why == DropReason::timed_out) result.timed_out = true;
  if (why == DropReason::full || why == DropReason::timed_out) raise_full(cls, "refusing");
}

void Spool::Impl::raise_full(DocClass cls, std::string_view what) {
  if (counters.full) return;  // one WARN (and one alert upstream) per episode
  counters.full = true;
  ++counters.full_episodes;
  log::warn("spool {}: full ({} of {} bytes): {} {} documents", dir_name, bytes, config.max_bytes, what,
            to_string(cls));
}

bool Spool::Impl::reserve_space(DocClass cls, std::uint64_t size, TimePoint deadline, AppendResult& result) {
  const std::uint64_t limit = limit_for(cls);
  const auto fits = [&] { return bytes + staged.size() + size <= limit; };
  // Deleting acknowledged segment files (the writer's own, or ones whose
  // unlink failed before) may make room; mu is released for the unlinks.
  const auto fits_after_removals = [&](std::unique_lock<std::mutex>& lock) {
    if (!retire_active_if_acked() && doomed.empty()) return false;
    lock.unlock();
    remove_doomed();
    lock.lock();
    return fits();
  };
  {
    std::unique_lock lock(mu);
    if (fits() || fits_after_removals(lock)) return true;
    if (cls == DocClass::event || cls == DocClass::state) {
      drop(cls, DropReason::full, result);
      return false;
    }
  }
  // Back-pressure: write what is staged so the shipper can take it and its
  // acks can free segments, then wait for that.
  flush(result);
  std::unique_lock lock(mu);
  for (;;) {
    if (fits() || fits_after_removals(lock)) return true;
    if (closed || time.now() >= deadline) {
      drop(cls, DropReason::timed_out, result);
      return false;
    }
    raise_full(cls, "waiting to spool");
    const std::uint64_t seen = space_events;
    time.wait_until(lock, space_cv, deadline, [&] { return closed || space_events != seen; });
  }
}

void Spool::Impl::stage(const BulkDoc& doc) {
  if (staged_records == 0) staged_first_id = next_id;
  staged_last_id = next_id++;
  ++staged_records;
  ++staged_by_class[index(doc.cls)];
  sf::append_record(staged, staged_last_id, doc.cls, doc.ndjson);
}

FileError Spool::Impl::open_segment(std::uint64_t first_id) {
  std::uint64_t name_id = 0;
  {
    std::lock_guard lock(mu);
    // Names must sort like the ids inside (recovery orders by name).
    name_id = std::max(first_id, highest_name_id + 1);
  }
  const fs::path path = segment_path(name_id);
  Fd fd;
  if (const int e = open_file(files, path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, fd); e != 0)
    return FileError{e, "create", path};
  active_fd = std::move(fd);
  active_bytes = 0;
  dir_sync_due = true;  // with the first sync of its data
  std::lock_guard lock(mu);
  segments.push_back(Segment{name_id, 0, 0, 0, 0, {}});
  active_id = name_id;
  highest_name_id = name_id;
  return {};
}

// Syncs what was written to the active segment since the last sync, and
// first the directory when a segment was created since: data in a file whose
// name never reached the disk is lost with it.
FileError Spool::Impl::sync_active() {
  if (!active_fd || !dirty || config.fsync == FsyncPolicy::never) return {};
  FileError failure;
  if (dir_sync_due) {
    if (const int e = sync_dir(files, dir); e != 0) failure = FileError{e, "fsync (directory)", dir};
  }
  if (!failure) {
    dir_sync_due = false;
    if (const int e = files.sync_data(active_fd.get()); e != 0)
      failure = FileError{e, "fdatasync", segment_path(active_id)};
  }
  last_sync = time.now();       // a failed sync is retried at the policy's pace, not at every append
  if (failure) return failure;  // the caller logs and counts it
  dirty = false;
  std::lock_guard lock(mu);
  ++counters.fsyncs;
  return {};
}

// The interval policy and close(): the records are spooled already (and may
// be shipped); a failed sync leaves them in the page cache, and the next sync
// tries again.
void Spool::Impl::sync_or_log() {
  const FileError failure = sync_active();
  if (!failure) return;
  log::error(
      "spool {}: {}; records written since the last sync are not on disk yet (a power loss would lose "
      "them; a crash of salttap would not)",
      dir_name, failure.text());
  std::lock_guard lock(mu);
  ++counters.io_errors;
}

void Spool::Impl::close_segment() {
  if (!active_fd) return;
  sync_or_log();  // the interval policy would not come back to it
  active_fd.reset();
  active_bytes = 0;
  dirty = false;
  std::lock_guard lock(mu);
  active_id = 0;
}

void Spool::Impl::flush(AppendResult& result) {
  if (staged.empty()) return;
  const bool was_dirty = dirty;
  FileError failure;
  if (!active_fd) failure = open_segment(staged_first_id);
  if (!failure) {
    if (const int e = write_all(files, active_fd.get(), staged); e != 0)
      failure = FileError{e, "write", segment_path(active_id)};
  }
  if (!failure) {
    dirty = true;
    // every_batch: a batch is spooled (and readable) only once it is on disk.
    if (config.fsync == FsyncPolicy::every_batch) failure = sync_active();
  }
  if (failure) {
    dirty = was_dirty;
    discard_staged(failure, result);
  } else {
    publish_staged(result);
  }
  if (staged.capacity() > kKeepStagingBytes) std::string().swap(staged);
  staged.clear();
  staged_records = 0;
  std::fill(std::begin(staged_by_class), std::end(staged_by_class), 0);
  if (!failure && config.fsync == FsyncPolicy::interval && time.now() - last_sync >= config.fsync_interval)
    sync_or_log();
}

void Spool::Impl::publish_staged(AppendResult& result) {
  std::lock_guard lock(mu);
  Segment& seg = segments.back();  // the active one: only the writer appends to the list
  if (seg.records == 0) seg.first_id = staged_first_id;
  seg.last_id = staged_last_id;
  seg.records += staged_records;
  seg.bytes += staged.size();
  bytes += staged.size();
  untaken += staged_records;
  committed_next_id = next_id;
  counters.appended_records += staged_records;
  counters.appended_bytes += staged.size();
  result.spooled += staged_records;
  active_bytes = seg.bytes;
  data_cv.notify_all();
  if (data_listener) data_listener();
}

// The staged batch is not spooled: whatever part of it reached the segment is
// cut off (the segment ends with its last whole record again), and every
// document is counted as dropped. Its ids are not reused: were the cut to
// fail, records with those ids could still be on disk.
void Spool::Impl::discard_staged(const FileError& failure, AppendResult& result) {
  log::error("spool {}: {}; {} documents dropped (io_error)", dir_name, failure.text(), staged_records);
  std::uint64_t errors = 1;
  if (active_fd) {
    if (const int e = files.truncate(active_fd.get(), active_bytes); e != 0) {
      // The segment keeps a partial tail the reader never reads (it stops at
      // the last published record); the next batch starts a new segment, so
      // at a restart the tail is corruption in an older segment, cut there.
      log::error("spool {}: cannot cut {} back to {} bytes: {}; continuing in a new segment", dir_name,
                 segment_path(active_id).string(), active_bytes, errno_text(e));
      ++errors;
      close_segment();
    }
  }
  std::lock_guard lock(mu);
  counters.io_errors += errors;
  for (std::size_t c = 0; c < kDocClasses; ++c)
    for (std::uint64_t n = 0; n < staged_by_class[c]; ++n) drop(static_cast<DocClass>(c), DropReason::io_error, result);
}

bool Spool::Impl::retire_active_if_acked() {
  // The writer's segment, all of it acked, is deleted when its room is needed
  // (so a spool smaller than one segment still frees space) and at close().
  if (active_id == 0 || !staged.empty() || segments.empty()) return false;
  const Segment& seg = segments.back();
  if (seg.name_id != active_id || seg.records == 0 || seg.last_id > acked_id) return false;
  active_fd.reset();  // a close(2): nothing is written or synced
  active_bytes = 0;
  dirty = false;
  active_id = 0;
  doomed.push_back(DoomedSegment{seg.name_id, seg.bytes, false});
  segments.pop_back();
  return true;
}

void Spool::Impl::remove_doomed() {
  std::vector<DoomedSegment> batch;
  {
    std::lock_guard lock(mu);
    if (doomed.empty()) return;
    batch.swap(doomed);  // each file is unlinked by one thread
  }
  std::uint64_t freed = 0, new_errors = 0;
  std::vector<DoomedSegment> kept;
  for (DoomedSegment& seg : batch) {
    const fs::path path = segment_path(seg.name_id);
    const int e = files.remove(path);
    if (e == 0 || e == ENOENT) {
      freed += seg.bytes;
      if (seg.failed) log::info("spool {}: removed {} after all", dir_name, path.string());
      continue;
    }
    if (!seg.failed) {
      // Its records are all acknowledged: nothing is lost, but its bytes
      // stay on disk (and count against max_bytes) until it goes.
      log::error("spool {}: cannot remove {}: {}; {} bytes stay on disk (retried at each ack)", dir_name, path.string(),
                 errno_text(e), seg.bytes);
      seg.failed = true;
      ++new_errors;
    }
    kept.push_back(seg);
  }
  std::lock_guard lock(mu);
  counters.io_errors += new_errors;
  doomed.insert(doomed.end(), kept.begin(), kept.end());
  if (freed == 0) return;
  bytes -= freed;
  ledger_due = true;
  space_freed();
}

void Spool::Impl::space_freed() {
  if (counters.full && bytes < limit_for(DocClass::event)) {
    counters.full = false;
    log::info("spool {}: space freed ({} of {} bytes); accepting every class again", dir_name, bytes, config.max_bytes);
  }
  ++space_events;
  space_cv.notify_all();
}

// ---------------------------------------------------------------------------
// Reader

bool Spool::Impl::enter_segment(std::uint64_t min_name_id) {
  // The first segment named >= min_name_id (the one being read was deleted
  // once all of it was acked; the next one has a larger name).
  std::uint64_t name_id = 0;
  {
    std::lock_guard lock(mu);
    const auto it =
        std::find_if(segments.begin(), segments.end(), [&](const Segment& s) { return s.name_id >= min_name_id; });
    if (it == segments.end()) return false;
    name_id = it->name_id;
    if (name_id == read_segment && read_cursor) return true;
    read_holes = it->holes;
  }
  const fs::path path = segment_path(name_id);
  Fd fd;
  if (const int e = open_file(files, path, O_RDONLY, fd); e != 0 && e != ENOENT) {
    log::error("spool {}: cannot open {}: {}; skipping it", dir_name, path.string(), errno_text(e));
    std::lock_guard lock(mu);
    ++counters.io_errors;
  }
  if (name_id != read_segment) read_offset = 0;
  read_segment = name_id;
  read_fd = std::move(fd);
  read_source = read_fd ? std::make_unique<FdSource>(files, read_fd.get(), path) : nullptr;
  read_cursor = read_fd ? std::make_unique<sf::SegmentCursor>(*read_source, 0) : nullptr;
  return true;
}

std::vector<SpoolRecord> Spool::Impl::read_some(std::size_t max_records, std::size_t max_bytes) {
  std::vector<SpoolRecord> out;
  std::size_t payload_bytes = 0;
  std::uint64_t lost = 0, lost_bytes = 0, read_errors = 0;
  bool skipped = false;  // a corrupt run since the last good record
  if (!enter_segment(read_segment)) return out;
  while (out.size() < max_records) {
    bool exists = false, last = true;
    std::uint64_t committed = 0;
    {
      std::lock_guard lock(mu);
      const auto it = std::find_if(segments.begin(), segments.end(),
                                   [&](const Segment& seg) { return seg.name_id == read_segment; });
      exists = it != segments.end();
      committed = exists ? it->bytes : 0;
      last = !exists || std::next(it) == segments.end();
    }
    if (!exists) {  // deleted under us (all of it acked): go on with the next one
      if (!enter_segment(read_segment)) break;
      continue;
    }
    for (const Hole& hole : read_holes)
      if (read_offset == hole.begin) read_offset = hole.end;
    if (!read_cursor && read_offset < committed) {  // its file was removed behind our back
      log::error("spool {}: segment {} cannot be read: {} bytes skipped", dir_name, read_segment,
                 committed - read_offset);
      lost_bytes += committed - read_offset;
      skipped = true;
      read_offset = committed;
    }
    if (!read_cursor || read_offset >= committed) {
      if (last || !enter_segment(read_segment + 1)) break;
      continue;
    }
    read_cursor->set_size(committed);
    sf::RecordHeader h;
    SpoolRecord rec;
    sf::Probe probe = sf::Probe::bad;
    std::uint64_t next = committed;
    try {
      probe = read_cursor->probe(read_offset, last_read_id, h, &rec.payload);
      if (probe != sf::Probe::ok) next = read_cursor->resync(read_offset, last_read_id);
    } catch (const SpoolError& e) {
      log::error("spool {}: {}; skipping the rest of segment {}", dir_name, e.what(), read_segment);
      ++read_errors;
    }
    if (probe != sf::Probe::ok) {
      // Recovery verified these bytes: the file changed under us.
      log::error("spool {}: corrupt data in segment {} at offset {} ({}): {} bytes skipped", dir_name, read_segment,
                 read_offset, sf::to_string(probe), next - read_offset);
      lost_bytes += next - read_offset;
      skipped = true;
      read_offset = next;
      continue;
    }
    if (!out.empty() && payload_bytes + h.payload_bytes > max_bytes) break;
    // last_read_id starts at acked_id, so here the gap is exact even from 0.
    if (skipped) lost += std::max<std::uint64_t>(1, h.id - last_read_id - 1);
    skipped = false;
    read_offset += h.record_bytes();
    last_read_id = h.id;
    payload_bytes += h.payload_bytes;
    rec.id = h.id;
    rec.cls = h.cls;
    out.push_back(std::move(rec));
  }
  if (skipped) ++lost;  // a run up to the end: at least one record

  std::lock_guard lock(mu);
  counters.read_corrupt_records += lost;
  counters.read_corrupt_bytes += lost_bytes;
  counters.io_errors += read_errors;
  for (const auto& r : out) outstanding.insert(outstanding.end(), r.id);
  if (!out.empty()) taken_upto = out.back().id;
  // At the writer's end nothing is untaken, whatever corruption made the
  // count drift; elsewhere the records read (and lost) leave the count.
  const bool later_segment = !segments.empty() && segments.back().name_id > read_segment;
  const auto it =
      std::find_if(segments.begin(), segments.end(), [&](const Segment& seg) { return seg.name_id == read_segment; });
  const bool at_end = !later_segment && (it == segments.end() || read_offset >= it->bytes);
  untaken = at_end ? 0 : untaken - std::min<std::uint64_t>(untaken, out.size() + lost);
  return out;
}

// ---------------------------------------------------------------------------
// Ledger

void Spool::Impl::write_ledger(bool force) {
  std::lock_guard ledger_lock(ledger_mu);
  sf::Ledger ledger;
  {
    std::lock_guard lock(mu);
    if (!force && !ledger_due && acked_id == ledger_acked_id) return;
    ledger = sf::Ledger{acked_id, std::max(committed_next_id, acked_id + 1)};
    ledger_due = false;
  }
  const FileError failure = put_ledger(ledger);
  const TimePoint now = time.now();
  std::lock_guard lock(mu);
  last_ledger_write = now;
  if (failure) {
    // Not fatal: an old ledger means resends after a restart (409s), not loss.
    if (!ledger_failing) {
      log::error("spool {}: cannot write the ledger: {}; acked up to {} is not on disk yet (retried)", dir_name,
                 failure.text(), ledger.acked_id);
      ++counters.io_errors;
    }
    ledger_failing = true;
    ledger_due = true;
    return;
  }
  if (ledger_failing) log::info("spool {}: ledger written again (acked up to {})", dir_name, ledger.acked_id);
  ledger_failing = false;
  ledger_acked_id = ledger.acked_id;
  ++counters.ledger_writes;
}

FileError Spool::Impl::put_ledger(const sf::Ledger& ledger) {
  const auto encoded = sf::encode_ledger(ledger);
  AtomicFile file(dir / kLedgerName, files, {.sync = config.fsync != FsyncPolicy::never});
  auto written = file.replace({reinterpret_cast<const char*>(encoded.data()), encoded.size()});
  return written ? FileError{} : written.error();
}

// ---------------------------------------------------------------------------
// Spool

Spool::Spool(SpoolConfig config, SteadyTime& time, StateFilesystem& files)
    : impl_(std::make_unique<Impl>(std::move(config), time, files)) {}

Spool::~Spool() {
  close();
  std::lock_guard write_lock(impl_->write_mu);
  impl_->close_segment();
}

const RecoveryReport& Spool::recovery() const { return impl_->report; }

AppendResult Spool::append(std::span<const BulkDoc> docs, std::chrono::milliseconds wait) {
  Impl& s = *impl_;
  AppendResult result;
  {
    std::lock_guard write_lock(s.write_mu);
    const auto deadline = s.deadline_after(wait);
    for (std::size_t i = 0; i < docs.size(); ++i) {
      const BulkDoc& doc = docs[i];
      const std::uint64_t size = sf::kHeaderBytes + doc.ndjson.size();
      if (doc.ndjson.size() > sf::kMaxPayload || size > s.config.max_bytes) {
        std::lock_guard lock(s.mu);
        log::error("spool {}: a {} document of {} bytes can never fit (max_bytes {}); dropped", s.dir_name,
                   to_string(doc.cls), doc.ndjson.size(), s.config.max_bytes);
        s.drop(doc.cls, DropReason::too_large, result);
        continue;
      }
      if (!s.reserve_space(doc.cls, size, deadline, result)) {
        if (doc.cls != DocClass::event && doc.cls != DocClass::state) result.timed_out_docs.push_back(i);
        continue;
      }
      // Records never span segments: a full segment is closed first.
      const std::uint64_t in_segment = s.active_bytes + s.staged.size();
      if (in_segment > 0 && in_segment + size > s.config.segment_bytes) {
        s.flush(result);
        s.close_segment();
      }
      s.stage(doc);
    }
    s.flush(result);
  }
  bool ledger_due = false;
  {
    std::lock_guard lock(s.mu);
    ledger_due = s.ledger_retry_due();
  }
  if (ledger_due) s.write_ledger(false);
  return result;
}

std::vector<SpoolRecord> Spool::take(std::size_t max_records, std::size_t max_bytes, std::chrono::milliseconds wait) {
  Impl& s = *impl_;
  if (max_records == 0) return {};
  const auto deadline = s.deadline_after(wait);
  for (;;) {
    {
      std::unique_lock lock(s.mu);
      const std::uint64_t wakeups = s.take_wakeups_seen;
      s.time.wait_until(lock, s.data_cv, deadline,
                        [&] { return s.untaken > 0 || s.closed || s.take_wakeups != wakeups; });
      s.take_wakeups_seen = s.take_wakeups;
      if (s.untaken == 0) return {};
    }
    std::vector<SpoolRecord> records;
    {
      std::lock_guard read_lock(s.read_mu);
      records = s.read_some(max_records, max_bytes);
    }
    if (!records.empty()) return records;
    // Another taker got there first, or the rest was corrupt: wait again.
    if (s.time.now() >= deadline) return {};
  }
}

void Spool::ack(std::span<const std::uint64_t> ids) {
  Impl& s = *impl_;
  bool write_ledger = false, removals = false;
  {
    std::lock_guard lock(s.mu);
    for (const std::uint64_t id : ids) {
      if (s.outstanding.erase(id) == 1) {
        ++s.counters.acked_records;
      } else {
        ++s.counters.unknown_acks;
      }
    }
    const std::uint64_t acked = s.outstanding.empty() ? s.taken_upto : *s.outstanding.begin() - 1;
    if (acked > s.acked_id) {
      s.acked_id = acked;
      while (!s.segments.empty() && s.segments.front().name_id != s.active_id &&
             s.segments.front().last_id <= s.acked_id) {
        s.doomed.push_back(DoomedSegment{s.segments.front().name_id, s.segments.front().bytes, false});
        s.segments.pop_front();
      }
      // Under `fsync: interval` the ledger (two fsyncs, on the shipper's thread)
      // follows the same interval: a ledger up to that stale only means resends
      // after a crash, which the engine answers 409.
      const auto every = s.config.fsync == FsyncPolicy::interval
                             ? std::max<Duration>(kLedgerInterval, s.config.fsync_interval)
                             : Duration(kLedgerInterval);
      write_ledger = s.time.now() - s.last_ledger_write >= every;
      // Also wakes a writer waiting for room: it may retire its own segment.
      // Nothing else retires it: while the shipper keeps up, every batch would
      // cost a segment file created and deleted.
      s.space_freed();
    }
    removals = !s.doomed.empty();
    write_ledger = write_ledger || s.ledger_retry_due();
  }
  if (removals) {
    s.remove_doomed();  // the segments acked now, and any whose unlink failed before
    std::lock_guard lock(s.mu);
    write_ledger = write_ledger || s.ledger_retry_due();
  }
  if (write_ledger) s.write_ledger(false);
}

void Spool::wake_takers() {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mu);
    ++s.take_wakeups;
  }
  s.data_cv.notify_all();
}

void Spool::set_data_listener(std::function<void()> listener) {
  std::lock_guard lock(impl_->mu);
  impl_->data_listener = std::move(listener);
}

void Spool::close() {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mu);
    s.closed = true;
    if (s.data_listener) s.data_listener();
  }
  s.data_cv.notify_all();
  s.space_cv.notify_all();
  {
    std::lock_guard write_lock(s.write_mu);
    s.sync_or_log();
    std::lock_guard lock(s.mu);
    s.retire_active_if_acked();
  }
  s.remove_doomed();
  s.write_ledger(false);
}

SpoolStats Spool::stats() const {
  const Impl& s = *impl_;
  std::lock_guard lock(s.mu);
  SpoolStats st = s.counters;
  st.bytes = s.bytes;
  st.segments = s.segments.size() + s.doomed.size();
  st.pending_records = s.untaken + s.outstanding.size();
  st.waiting_records = s.untaken;
  st.acked_id = s.acked_id;
  return st;
}

std::filesystem::path Spool::dead_letter_dir() const { return impl_->dir / kDeadDir; }

}  // namespace salttap::indexer
