#pragma once
// Where the event loop's events come from: the live bus (the tap's bounded
// queue, for `run`) or capture files (`replay`). A capture feed can carry the
// replay's clock: it moves it forward to each event's `_stamp` before
// handing the event on, so a replay runs on the events' own time and prints
// the same whenever it runs.

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "tap/capture_file.h"
#include "tap/decode_limits.h"
#include "tap/event.h"
#include "tap/event_queue.h"

namespace salttap::pipeline {

class EventFeed {
 public:
  using OnEvent = std::function<void(const tap::Event&)>;
  using OnBatchEnd = std::function<void()>;

  virtual ~EventFeed() = default;
  // Hands each event to `on_event`, in stream order, and calls
  // `on_batch_end` after each batch the source delivered, until the feed
  // ends or is stopped. Returns 0, or 1 when a capture file could not be read.
  virtual int pump(const OnEvent& on_event, const OnBatchEnd& on_batch_end) = 0;
};

// The bus, through the tap's queue: a batch is what one pop_all() returns,
// at least every `poll` (so `stop` is checked that often).
class LiveFeed final : public EventFeed {
 public:
  LiveFeed(tap::EventQueue& queue, std::function<bool()> stop,
           std::chrono::milliseconds poll = std::chrono::milliseconds(200))
      : queue_(queue), stop_(std::move(stop)), poll_(poll) {}
  int pump(const OnEvent& on_event, const OnBatchEnd& on_batch_end) override;
  // Work besides events waits (`run`'s reconcile pass): the next batch is
  // taken without waiting for events when this says true.
  void set_busy(std::function<bool()> busy) { busy_ = std::move(busy); }

 private:
  tap::EventQueue& queue_;
  std::function<bool()> stop_;
  std::chrono::milliseconds poll_;
  std::function<bool()> busy_;
};

// Capture files (raw pub-socket bytes or JSON lines), one after the other,
// as one stream: no batch ends. Bad frames are counted and reported per file
// (a WARN line), a file that cannot be read is an ERROR line and rc 1.
class CaptureFeed final : public EventFeed {
 public:
  // `event_time` (may be null): moved forward to each event's `_stamp`.
  CaptureFeed(std::vector<std::string> files, tap::DecodeLimits limits, ManualClock* event_time = nullptr)
      : files_(std::move(files)), limits_(limits), event_time_(event_time) {}
  int pump(const OnEvent& on_event, const OnBatchEnd& on_batch_end) override;

 private:
  std::vector<std::string> files_;
  tap::DecodeLimits limits_;
  ManualClock* event_time_;
};

// The WARN line a capture feed writes for a file with bad frames or lines.
void report_capture(const std::string& path, const tap::CaptureStats& stats);

// `replay --output events`: every file's events as JSON lines
// (tap::transcode_capture) to `out`, in order, bad frames reported as by
// CaptureFeed. 0, or 1 when a file could not be read.
int transcode_captures(const std::vector<std::string>& files, const tap::DecodeLimits& limits, std::FILE* out);

}  // namespace salttap::pipeline
