#pragma once
// What the live-reader tests share (bus readers, the tap journal behind them):
// a reader subscribed to a fake master, the tags it queued, and waiting on
// its state. Real time only paces the sockets: each wait is for an observable
// state under a one-minute guard against a broken test hanging the suite, and
// returns as soon as the state is there.

#include <chrono>
#include <cstddef>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tap/event.h"
#include "tap/event_queue.h"
#include "tap/event_source.h"
#include "tests/support/fake_publisher.h"

namespace salttap::testing {

inline constexpr std::chrono::milliseconds kReaderGuard = std::chrono::seconds(60);

// A reader with `options`, started, once the fake master `pub` sees it subscribed.
inline tap::EventSourcePtr subscribed_reader(FakePublisher& pub, const tap::ReaderOptions& options,
                                             tap::EventQueue& queue) {
  auto reader = tap::make_event_source(options, queue);
  reader->start();
  pub.wait_for_subscribers(1);
  return reader;
}

// ... with the default options.
inline tap::EventSourcePtr subscribed_reader(FakePublisher& pub, tap::Endpoint endpoint, tap::EventQueue& queue) {
  tap::ReaderOptions options;
  options.endpoint = std::move(endpoint);
  return subscribed_reader(pub, options, queue);
}

// The tags of the events on `q`, popped until `n` came or `guard` ran out.
inline std::vector<std::string> pop_tags(tap::EventQueue& q, std::size_t n,
                                         std::chrono::milliseconds guard = kReaderGuard) {
  std::vector<std::string> tags;
  std::vector<tap::Event> batch;
  const auto deadline = std::chrono::steady_clock::now() + guard;
  while (tags.size() < n && std::chrono::steady_clock::now() < deadline) {
    batch.clear();
    q.pop_all(batch, std::chrono::milliseconds(20));
    for (const tap::Event& e : batch) tags.emplace_back(e.tag());
  }
  return tags;
}

// Polls a reader's state (its stats have no notification) until `pred` holds.
template <typename Pred>
bool eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + kReaderGuard;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

}  // namespace salttap::testing
