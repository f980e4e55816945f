#include "tap/tap_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/dir_lock.h"
#include "common/errno_text.h"
#include "common/log.h"
#include "tap/internal/journal_format.h"

namespace salttap::tap {
namespace fs = std::filesystem;
using journal_format::Parse;

namespace {

constexpr std::size_t kReadWindow = std::size_t{4} << 20;
constexpr std::size_t kWriteBuffer = std::size_t{1} << 20;  // flushed early past this
constexpr auto kRefusalLogInterval = std::chrono::seconds(10);
constexpr std::uint64_t kMaxLoggedCorruptions = 20;

template <typename F>
auto retry_eintr(F f) {
  for (;;) {
    auto r = f();
    if (r >= 0 || errno != EINTR) return r;
  }
}

// Reads up to out.size() bytes at `offset`; fewer only at the end of the file. -1: errno.
ssize_t read_fully(int fd, std::string& out, std::uint64_t offset) {
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n =
        retry_eintr([&] { return ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(offset + got)); });
    if (n < 0) return -1;
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(got);
}

bool write_fully(int fd, std::string_view bytes, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = retry_eintr(
        [&] { return ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done)); });
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

TapJournal::TapJournal(JournalConfig config) : config_(std::move(config)) {
  std::error_code ec;
  fs::create_directories(config_.dir, ec);
  if (ec || !fs::is_directory(config_.dir))
    throw JournalError(fmt::format("tap journal {}: cannot create the directory: {}", config_.dir.string(),
                                   ec ? ec.message() : "not a directory"));
  auto lock = DirLock::take(config_.dir);
  if (!lock) throw JournalError(lock.error().text("tap journal"));
  if (::access(config_.dir.c_str(), W_OK | X_OK) != 0) {
    const int err = errno;
    throw JournalError(fmt::format("tap journal {}: not writable: {}", config_.dir.string(), errno_text(err)));
  }
  lock_.emplace(std::move(lock).value());
  recover();
}

TapJournal::~TapJournal() {
  flush();
  if (wfd_ >= 0) ::close(wfd_);
  close_reader();
}

fs::path TapJournal::segment_path(std::uint64_t seq) const {
  return config_.dir / journal_format::segment_file_name(seq);
}

// What a previous run left: every segment is sealed (the writer always
// starts a new one) and counted by walking its headers; CRCs are checked
// when the records are drained.
void TapJournal::recover() {
  std::vector<std::uint64_t> seqs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(config_.dir, ec)) {
    if (const auto seq = journal_format::parse_segment_file_name(entry.path().filename().string()))
      seqs.push_back(*seq);
  }
  if (ec) throw JournalError(fmt::format("tap journal {}: cannot list it: {}", config_.dir.string(), ec.message()));
  std::sort(seqs.begin(), seqs.end());
  std::string buf;
  for (const std::uint64_t seq : seqs) {
    next_seq_ = std::max(next_seq_, seq + 1);
    const fs::path path = segment_path(seq);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      log::warn("tap journal: skipped {}: {}", path.string(), fd < 0 ? errno_text(errno) : "not a regular file");
      if (fd >= 0) ::close(fd);
      continue;
    }
    Segment seg{seq, static_cast<std::uint64_t>(st.st_size), 0, true};
    std::uint64_t off = 0;
    while (off < seg.size) {
      buf.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kReadWindow, seg.size - off)));
      const ssize_t got = read_fully(fd, buf, off);
      if (got <= 0) break;
      std::string_view view(buf.data(), static_cast<std::size_t>(got));
      std::size_t pos = 0;
      bool stop = false;
      while (pos < view.size()) {
        const auto r = journal_format::parse_record(view.substr(pos), config_.max_record_bytes, false);
        if (r.status == Parse::ok) {
          ++seg.frames;
          pos += r.record_bytes;
          continue;
        }
        // incomplete: the window ends inside a record (read on from it), or
        // the file does (a torn tail: the drain counts it)
        stop = r.status == Parse::corrupt || off + pos + r.record_bytes > seg.size;
        if (!stop && pos == 0) {
          // a record larger than the window: step over it by its header
          pos = static_cast<std::size_t>(std::min<std::uint64_t>(r.record_bytes, seg.size - off));
          ++seg.frames;
        }
        break;
      }
      if (stop) break;
      off += pos;
    }
    ::close(fd);
    if (seg.size == 0) {
      ::unlink(path.c_str());
      continue;
    }
    segments_.push_back(seg);
    stats_.bytes += seg.size;
    stats_.frames += seg.frames;
  }
  stats_.segments = segments_.size();
  stats_.recovered_frames = stats_.frames;
  if (stats_.bytes > 0) {
    active_ = true;
    log::info("tap journal {}: {} frames ({} bytes) left by the previous run; they are drained before new events",
              config_.dir.string(), stats_.frames, stats_.bytes);
  }
}

bool TapJournal::active() const {
  std::lock_guard lock(mutex_);
  return active_;
}

bool TapJournal::readable() const {
  std::lock_guard lock(mutex_);
  return stats_.bytes > 0 || (active_ && buffered_frames_ == 0);
}

JournalStats TapJournal::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void TapJournal::note_refusal(bool error, std::uint64_t frames, std::uint64_t bytes) {
  (error ? stats_.dropped_error : stats_.dropped_full) += frames;
  stats_.dropped_bytes += bytes;
  if (!stats_.refusing) {
    stats_.refusing = true;
    stats_.refused_for_error = error;
    ++stats_.refusal_episodes;
  }
  refused_since_log_ += frames;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refusal_log_ < kRefusalLogInterval) return;
  last_refusal_log_ = now;
  log::error("tap journal {}: dropped {} frames ({}); {} dropped in total; {} bytes wait to be drained",
             config_.dir.string(), refused_since_log_,
             error ? "a write failed" : fmt::format("max_bytes {} reached", config_.max_bytes),
             stats_.dropped_full + stats_.dropped_error, stats_.bytes);
  refused_since_log_ = 0;
}

bool TapJournal::open_segment() {
  if (wfd_ >= 0) ::close(wfd_);
  wfd_ = -1;
  std::uint64_t seq = 0;
  {
    std::lock_guard lock(mutex_);
    seq = next_seq_++;
  }
  const fs::path path = segment_path(seq);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) {
    std::lock_guard lock(mutex_);
    ++stats_.write_errors;
    if (stats_.write_errors <= kMaxLoggedCorruptions)
      log::error("tap journal: cannot create {}: {}", path.string(), errno_text(errno));
    return false;
  }
  wfd_ = fd;
  wseq_ = seq;
  wsize_ = 0;
  std::lock_guard lock(mutex_);
  if (!segments_.empty()) segments_.back().sealed = true;
  segments_.push_back(Segment{seq, 0, 0, false});
  stats_.segments = segments_.size();
  return true;
}

TapJournal::Append TapJournal::append(JournalRecordKind kind, std::string_view payload) {
  const std::uint64_t record = journal_format::kHeaderBytes + payload.size();
  bool reset = false;
  {
    std::lock_guard lock(mutex_);
    reset = std::exchange(writer_reset_, false);
    if (payload.size() > config_.max_record_bytes ||
        stats_.bytes + (reset ? 0 : wbuf_.size()) + record > config_.max_bytes) {
      note_refusal(false, 1, payload.size());
      return Append::full;
    }
    active_ = true;
    ++buffered_frames_;
  }
  if (reset && wfd_ >= 0) {  // its file is gone; nothing was buffered for it
    ::close(wfd_);
    wfd_ = -1;
  }
  const bool full = wsize_ + wbuf_.size() + record > config_.segment_bytes && wsize_ + wbuf_.size() > 0;
  if (wfd_ < 0 || full) {
    flush();
    if (!open_segment()) {
      std::lock_guard lock(mutex_);
      --buffered_frames_;
      note_refusal(true, 1, payload.size());
      return Append::error;
    }
  }
  journal_format::append_record(wbuf_, kind, payload);
  ++wbuf_frames_;
  wbuf_bytes_ += payload.size();
  if (wbuf_.size() >= kWriteBuffer) flush();
  return Append::ok;
}

std::uint64_t TapJournal::flush() {
  if (wbuf_.empty()) return 0;
  const std::uint64_t frames = wbuf_frames_;
  const bool ok = write_fully(wfd_, wbuf_, wsize_);
  const int err = errno;
  std::uint64_t lost = 0;
  {
    std::lock_guard lock(mutex_);
    buffered_frames_ -= frames;
    if (ok) {
      Segment& tail = segments_.back();
      tail.size += wbuf_.size();
      tail.frames += frames;
      stats_.bytes += wbuf_.size();
      stats_.frames += frames;
      stats_.spilled_frames += frames;
      stats_.spilled_bytes += wbuf_bytes_;
    } else {
      ++stats_.write_errors;
      if (stats_.write_errors <= kMaxLoggedCorruptions)
        log::error("tap journal: write to {} failed: {}", segment_path(wseq_).string(), errno_text(err));
      note_refusal(true, frames, wbuf_bytes_);
      lost = frames;
    }
  }
  if (ok) {
    wsize_ += wbuf_.size();
  } else if (::ftruncate(wfd_, static_cast<off_t>(wsize_)) != 0) {
    // The reader never reads past the flushed size; a restart sees a torn tail and counts it.
  }
  wbuf_.clear();
  wbuf_frames_ = 0;
  wbuf_bytes_ = 0;
  return lost;
}

void TapJournal::close_reader() {
  if (rfd_ >= 0) ::close(rfd_);
  rfd_ = -1;
}

std::size_t TapJournal::drain(std::size_t max_records, std::size_t max_bytes, const RecordSink& sink) {
  std::size_t handed = 0;
  std::uint64_t taken = 0;
  while (handed < max_records && taken < max_bytes) {
    Segment head;
    {
      std::lock_guard lock(mutex_);
      if (segments_.empty()) break;
      head = segments_.front();
    }
    if (rseq_ != head.seq) {
      close_reader();
      rseq_ = head.seq;
      roff_ = 0;
    }
    if (roff_ >= head.size) {
      if (!head.sealed) break;  // the writer's segment: wait for more
      close_reader();
      ::unlink(segment_path(head.seq).c_str());
      std::lock_guard lock(mutex_);
      // Frames still counted here were lost to corruption (already counted as such).
      stats_.frames -= std::min(stats_.frames, segments_.front().frames);
      segments_.pop_front();
      stats_.segments = segments_.size();
      roff_ = 0;
      rseq_ = 0;
      continue;
    }
    std::uint64_t skipped = 0;  // corrupt bytes stepped over in this window
    std::uint64_t frames = 0;
    std::size_t pos = 0;
    if (rfd_ < 0) rfd_ = ::open(segment_path(head.seq).c_str(), O_RDONLY | O_CLOEXEC);
    std::string why;
    if (rfd_ < 0) {
      why = fmt::format("cannot open it: {}", errno_text(errno));
    } else {
      rbuf_.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kReadWindow, head.size - roff_)));
      // Twice at most: again with a buffer the size of a record larger than the window.
      for (int attempt = 0; attempt < 2; ++attempt) {
        const ssize_t got = read_fully(rfd_, rbuf_, roff_);
        if (got < 0) {
          why = fmt::format("read failed: {}", errno_text(errno));
          break;
        }
        const std::string_view view(rbuf_.data(), static_cast<std::size_t>(got));
        std::uint64_t grow = 0;  // the size of a record larger than the buffer
        while (pos < view.size() && handed < max_records && taken < max_bytes) {
          const auto r = journal_format::parse_record(view.substr(pos), config_.max_record_bytes);
          if (r.status == Parse::ok) {
            sink(r.kind, r.payload);
            pos += r.record_bytes;
            taken += r.record_bytes;
            ++handed;
            ++frames;
            continue;
          }
          if (r.status == Parse::corrupt)
            why = "a corrupt record";
          else if (roff_ + pos + r.record_bytes > head.size)
            why = "a record cut short";
          else if (pos == 0 && r.record_bytes > rbuf_.size())
            grow = r.record_bytes;
          break;
        }
        if (grow == 0) break;
        rbuf_.resize(static_cast<std::size_t>(grow));
      }
      // The file holds less than its flushed size says (cut by hand): nothing more to read in it.
      if (why.empty() && pos == 0 && handed < max_records && taken < max_bytes)
        why = "a record that cannot be read whole";
    }
    if (!why.empty()) {
      skipped = head.size - roff_ - pos;
      std::lock_guard lock(mutex_);
      ++stats_.corrupt_records;
      stats_.corrupt_bytes += skipped;
      if (corrupt_logged_++ < kMaxLoggedCorruptions)
        log::warn("tap journal: {} at byte {} of {}: skipped the {} bytes after it", why, roff_ + pos,
                  segment_path(head.seq).string(), skipped);
    }
    std::lock_guard lock(mutex_);
    stats_.bytes -= std::min<std::uint64_t>(stats_.bytes, pos + skipped);
    stats_.frames -= std::min(stats_.frames, frames);
    stats_.drained_frames += frames;
    if (!segments_.empty() && segments_.front().seq == head.seq)
      segments_.front().frames -= std::min(segments_.front().frames, frames);
    roff_ += pos + skipped;
  }
  return handed;
}

bool TapJournal::finish_if_drained() {
  std::lock_guard lock(mutex_);
  if (!active_) return true;
  if (stats_.bytes != 0 || buffered_frames_ != 0) return false;
  close_reader();
  for (const Segment& s : segments_) ::unlink(segment_path(s.seq).c_str());
  segments_.clear();
  stats_.segments = 0;
  stats_.frames = 0;
  roff_ = 0;
  rseq_ = 0;
  active_ = false;
  writer_reset_ = true;
  stats_.refusing = false;
  return true;
}

}  // namespace salttap::tap
