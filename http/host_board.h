#pragma once
// What the clients of one engine cluster know of its hosts, shared between
// them (the shipper's workers and the cluster-health poll): which host
// answered last and which failed (skipped while it cools down, whichever
// client found it dead), the round-robin cursor that spreads requests over
// the hosts, and per host the answers and failures counted. Thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace salttap::http {

// A configured host as logs, metrics and /healthz show it: the scheme added
// ("es1:9200" -> "http://es1:9200"), trailing '/' and user info removed.
std::string host_display(const std::string& configured);
std::vector<std::string> host_displays(const std::vector<std::string>& configured);

class HostBoard {
 public:
  using Clock = std::chrono::steady_clock;

  struct HostState {
    std::string host;            // the base URL without user info
    bool seen = false;           // a request went to it (answered or not)
    bool up = false;             // its last request got an answer (any HTTP status but 502/503/504)
    std::uint64_t answered = 0;  // requests it answered
    std::uint64_t failed = 0;    // requests it did not (no response, 502/503/504)
  };

  explicit HostBoard(std::vector<std::string> hosts);

  std::size_t size() const { return hosts_.size(); }
  void answered(std::size_t host);
  void failed(std::size_t host, Clock::time_point cooldown_until);
  Clock::time_point cooldown_until(std::size_t host) const;
  std::vector<HostState> snapshot() const;
  // Hosts whose last request got an answer.
  std::size_t up() const;

  // The order to try the hosts in for one request: from `start` on in list
  // order, then hosts cooling down after a failure last (soonest available
  // first), tried only when every other host failed too.
  std::vector<std::size_t> order(std::size_t start, Clock::time_point now) const;
  // Round robin: the hosts not cooling down, each call starting at the next
  // of them (so a dead host's turns go evenly to the others), then the
  // cooling ones as in order().
  std::vector<std::size_t> spread_order(Clock::time_point now);

 private:
  struct Entry {
    HostState state;
    Clock::time_point cooldown_until{};
  };
  mutable std::mutex mutex_;
  std::vector<Entry> hosts_;
  std::size_t cursor_ = 0;
};

}  // namespace salttap::http
