#include "tap/pull_framing_probe.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "common/log.h"
#include "tap/event_firer.h"
#include "tap/event_source.h"

namespace salttap::tap {
namespace {

using std::chrono::milliseconds;

// Waits until `tag` shows up on the pub socket (events before it are discarded).
bool wait_for_tag(SteadyTime& time, EventQueue& queue, const std::string& tag, milliseconds timeout) {
  const auto deadline = time.now() + timeout;
  std::vector<Event> events;
  while (time.now() < deadline) {
    events.clear();
    queue.pop_all(events, std::min(milliseconds(50), std::chrono::ceil<milliseconds>(deadline - time.now())));
    for (const Event& e : events)
      if (e.tag() == tag) return true;
  }
  return false;
}

}  // namespace

Framing probe_pull_framing(const ProbeOptions& options) {
  SteadyTime& time = options.steady_time ? *options.steady_time : real_steady_time();
  EventQueue queue({}, time);
  ReaderOptions reader_options;
  reader_options.endpoint = options.pub;
  reader_options.steady_time = &time;
  EventSourcePtr reader = make_event_source(reader_options, queue);
  reader->start();
  // The reader's state has no notification: poll it in short sleeps.
  const auto deadline = time.now() + options.connect_timeout;
  while (!reader->stats().connected && time.now() < deadline) time.sleep_for(milliseconds(10));
  if (!reader->stats().connected) {
    log::error("fire: cannot subscribe to {} to probe the pull framing", options.pub.describe());
    return Framing::unknown;
  }

  std::mt19937_64 rng{std::random_device{}()};
  msgpack::zone zone;
  const msgpack::object empty_map(std::map<std::string, int>{}, zone);
  for (Framing guess : {Framing::plain, Framing::len32}) {
    if (reader->stats().framing == Framing::len32 && guess == Framing::plain) continue;  // era D
    const std::string tag = fmt::format("{}probe/{:016x}", kFireTagPrefix, rng());
    try {
      EventFirer firer(options.pull);
      firer.fire(tag, empty_map, guess);
      firer.close();  // a wrongly framed write is discarded when the connection closes
    } catch (const FireError& e) {
      log::error("fire: probe failed: {}", e.what());
      return Framing::unknown;
    }
    if (wait_for_tag(time, queue, tag, options.wait_per_try)) {
      log::info("fire: {} accepts {} frames", options.pull.describe(), to_string(guess));
      return guess;
    }
  }
  return Framing::unknown;
}

}  // namespace salttap::tap
