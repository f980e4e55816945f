#include "tap/capture_file.h"

#include <cerrno>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "common/errno_text.h"
#include "common/log.h"
#include "tap/event_from_json.h"
#include "tap/internal/stream_decoder.h"
#include "tap/internal/stream_transcoder.h"

namespace salttap::tap {
namespace {

constexpr std::size_t kChunk = std::size_t{64} * 1024;
constexpr std::size_t kTranscodeChunk = std::size_t{1} << 20;
constexpr std::uint64_t kMaxLoggedErrors = 20;

void accumulate(DecodeStats& into, const DecodeStats& from) {
  into.events += from.events;
  for (std::size_t i = 0; i < into.errors.size(); ++i) into.errors[i] += from.errors[i];
}

// Every event body of a JSON-lines capture, handed to `take` (false: it did
// not decode); a line that holds no event, or whose body does not decode, is
// counted and logged (the first kMaxLoggedErrors of them) and skipped.
template <typename Take>
void each_json_body(std::istream& in, const std::string& path, const EventDecoder& decoder, CaptureStats& stats,
                    Take&& take) {
  std::string line, error;
  std::uint64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++stats.json_lines;
    auto body = event_body_from_json(line, &error);
    if (!body) {
      if (stats.json_errors++ < kMaxLoggedErrors) log::warn("{}:{}: skipped a line: {}", path, lineno, error);
      continue;
    }
    if (!take(*body) && stats.json_errors++ < kMaxLoggedErrors)
      log::warn("{}:{}: skipped a line: {}", path, lineno, decoder.last_error());
  }
}

// A capture file read a chunk at a time. The first chunk is read at once: it
// tells the format.
class ChunkedFile {
 public:
  ChunkedFile(const std::string& path, std::size_t chunk_bytes) : in_(path, std::ios::binary), buf_(chunk_bytes) {
    if (!in_) throw std::runtime_error(path + ": " + errno_text(errno));
    next();
  }
  // What the last read got; empty at the end.
  std::string_view chunk() const { return {buf_.data(), got_}; }
  void next() {
    in_.read(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    got_ = static_cast<std::size_t>(in_.gcount());
  }
  // The file from its start, as lines are read.
  std::istream& rewound() {
    in_.clear();
    in_.seekg(0);
    return in_;
  }

 private:
  std::ifstream in_;
  std::vector<char> buf_;
  std::size_t got_ = 0;
};

// A raw capture's frames that do not decode are skipped: the first
// kMaxLoggedErrors of them are logged.
template <typename Stream>
void log_skipped_frames(Stream& stream, const std::string& path) {
  stream.set_error_sink([&path, logged = std::uint64_t{0}](const std::string& why) mutable {
    if (logged++ < kMaxLoggedErrors) log::warn("{}: skipped a frame: {}", path, why);
  });
}

}  // namespace

CaptureFormat detect_capture_format(std::string_view head) {
  for (char c : head) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{' ? CaptureFormat::json_lines : CaptureFormat::raw;
  }
  return CaptureFormat::raw;
}

void read_capture(const std::string& path, const DecodeLimits& limits, const std::function<void(Event&&)>& on_event,
                  CaptureStats& stats) {
  ChunkedFile file(path, kChunk);
  const auto counted = [&](Event&& e) {
    ++stats.events;
    on_event(std::move(e));
  };

  if (detect_capture_format(file.chunk()) == CaptureFormat::raw) {
    StreamDecoder decoder(limits);
    log_skipped_frames(decoder, path);
    for (; !file.chunk().empty(); file.next()) decoder.feed(file.chunk(), counted);
    decoder.finish();
    stats.frames += decoder.frames().stats();
    accumulate(stats.decode, decoder.events().stats());
    return;
  }

  EventDecoder decoder(limits);
  each_json_body(file.rewound(), path, decoder, stats, [&](const auto& body) {
    auto event = decoder.decode_body(body);
    if (event) counted(std::move(*event));
    return event.has_value();
  });
  accumulate(stats.decode, decoder.stats());
}

void transcode_capture(const std::string& path, const DecodeLimits& limits,
                       const std::function<void(std::string_view lines)>& write, CaptureStats& stats,
                       std::size_t chunk_bytes) {
  ChunkedFile file(path, kTranscodeChunk);
  std::string out;
  out.reserve(chunk_bytes + chunk_bytes / 4);
  const auto drain = [&](bool always) {
    if (out.empty() || (!always && out.size() < chunk_bytes)) return;
    write(out);
    out.clear();
  };

  if (detect_capture_format(file.chunk()) == CaptureFormat::raw) {
    StreamTranscoder transcoder(limits);
    log_skipped_frames(transcoder, path);
    // A read of kTranscodeChunk bytes makes at most a few MiB of JSON: drained
    // after each read, the buffer stays near chunk_bytes.
    for (; !file.chunk().empty(); file.next()) {
      transcoder.feed(file.chunk(), out);
      drain(false);
    }
    transcoder.finish();
    drain(true);
    stats.frames += transcoder.frames().stats();
    accumulate(stats.decode, transcoder.events().stats());
    stats.events += transcoder.events().stats().events;
    return;
  }

  EventDecoder decoder(limits);
  each_json_body(file.rewound(), path, decoder, stats, [&](const auto& body) {
    if (!decoder.transcode_body(body, out)) return false;
    out.push_back('\n');
    ++stats.events;
    drain(false);
    return true;
  });
  drain(true);
  accumulate(stats.decode, decoder.stats());
}

}  // namespace salttap::tap
