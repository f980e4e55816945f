#pragma once
// The base of every outlet that talks to something outside: send() only
// queues (bounded: a full queue drops the alert, counted and logged); one
// worker thread delivers, retrying a failed attempt after the common backoff
// (common/backoff.h) until max_attempts, then gives up (counted and logged).
// stop(timeout) keeps delivering, retries included, until the queue is empty
// or `timeout` has passed; then the attempt in progress is interrupted and
// what is left is given up, counted. Waits go through SteadyTime, so tests
// drive retries and the drain on fake time. Subclasses only deliver().

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "alerting/alert_outlet.h"
#include "common/backoff.h"
#include "common/steady_time.h"

namespace salttap::alerting {

struct RetryPolicy {
  int max_attempts = 8;
  BackoffPolicy backoff{std::chrono::milliseconds(1000), std::chrono::milliseconds(60'000)};
  std::size_t queue_cap = 10'000;
  bool operator==(const RetryPolicy& o) const {
    return max_attempts == o.max_attempts && backoff.initial == o.backoff.initial && backoff.max == o.backoff.max &&
           queue_cap == o.queue_cap;
  }
};

struct OutletStats {
  std::atomic<std::uint64_t> delivered{0};
  std::atomic<std::uint64_t> attempts{0};
  std::atomic<std::uint64_t> retries{0};
  std::atomic<std::uint64_t> dropped_queue_full{0};
  std::atomic<std::uint64_t> gave_up{0};  // after max_attempts, or still undelivered when stop() ran out of time
};

class AsyncAlertOutlet : public AlertOutlet {
 public:
  AsyncAlertOutlet(std::string name, RetryPolicy policy, SteadyTime& time, UnitRandom random);
  // A subclass's destructor calls stop() first: the worker calls deliver().
  ~AsyncAlertOutlet() override;
  void send(const correlator::Alert& alert) override;
  // Returns once the queue drained, or `timeout` after the call (plus the
  // time the attempt in progress takes to notice its interruption).
  void stop(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  const OutletStats& stats() const { return stats_; }
  const std::string& name() const { return name_; }

 protected:
  void start();
  // One attempt; returns an error text, empty on success. Runs on the worker.
  virtual std::string deliver(const correlator::Alert& alert) = 0;
  // From stop(), once its timeout passed: makes the deliver() in progress
  // return soon (default: nothing to interrupt).
  virtual void interrupt() {}

 private:
  void run();
  bool out_of_time() const;  // mutex_ held
  // Waits until `retry_at`; false when stop() ran out of time first.
  bool wait_to_retry(std::unique_lock<std::mutex>& lock, SteadyTime::time_point retry_at);

  std::string name_;
  RetryPolicy policy_;
  SteadyTime& time_;
  UnitRandom random_;
  OutletStats stats_;
  std::mutex stop_mutex_;  // one stop() at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<correlator::Alert> queue_;
  bool stopping_ = false;
  bool worker_done_ = false;
  SteadyTime::time_point stop_deadline_{};
  std::thread thread_;
};

}  // namespace salttap::alerting
