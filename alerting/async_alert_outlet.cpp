#include "alerting/async_alert_outlet.h"

#include <algorithm>

#include "common/log.h"
#include "common/thread_name.h"

namespace salttap::alerting {

AsyncAlertOutlet::AsyncAlertOutlet(std::string name, RetryPolicy policy, SteadyTime& time, UnitRandom random)
    : name_(std::move(name)), policy_(policy), time_(time), random_(std::move(random)) {}

AsyncAlertOutlet::~AsyncAlertOutlet() { stop(std::chrono::milliseconds(0)); }

void AsyncAlertOutlet::start() {
  thread_ = std::thread([this] {
    name_this_thread("alert-outlet");
    run();
  });
}

void AsyncAlertOutlet::send(const correlator::Alert& alert) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= policy_.queue_cap) {
      ++stats_.dropped_queue_full;
      log::error("alert {}: {} queue full ({} alerts); dropped the alert for job {}", name_, name_, queue_.size(),
                 alert.jid);
      return;
    }
    queue_.push_back(alert);
  }
  wake_.notify_all();
}

void AsyncAlertOutlet::stop(std::chrono::milliseconds timeout) {
  std::lock_guard one_stop(stop_mutex_);
  std::unique_lock lock(mutex_);
  if (!stopping_) {
    stopping_ = true;
    stop_deadline_ = time_.now() + timeout;
  }
  wake_.notify_all();
  if (!thread_.joinable()) return;
  if (!time_.wait_until(lock, wake_, stop_deadline_, [this] { return worker_done_; })) {
    lock.unlock();
    interrupt();
  } else {
    lock.unlock();
  }
  thread_.join();
}

bool AsyncAlertOutlet::out_of_time() const { return stopping_ && time_.now() >= stop_deadline_; }

bool AsyncAlertOutlet::wait_to_retry(std::unique_lock<std::mutex>& lock, SteadyTime::time_point retry_at) {
  for (;;) {
    // A stop() whose deadline comes first ends the wait at that deadline.
    const auto until = stopping_ ? std::min(retry_at, stop_deadline_) : retry_at;
    time_.wait_until(lock, wake_, until, [&] { return stopping_ && stop_deadline_ < until; });
    if (out_of_time()) return false;
    if (time_.now() >= retry_at) return true;
  }
}

void AsyncAlertOutlet::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping, nothing left
    if (out_of_time()) {
      stats_.gave_up += queue_.size();
      log::error("alert {}: stopping: {} queued alerts not delivered", name_, queue_.size());
      queue_.clear();
      break;
    }
    correlator::Alert alert = std::move(queue_.front());
    queue_.pop_front();
    Backoff backoff(policy_.backoff, random_);
    for (int attempt = 1;; ++attempt) {
      lock.unlock();
      ++stats_.attempts;
      const std::string error = deliver(alert);
      lock.lock();
      if (error.empty()) {
        ++stats_.delivered;
        break;
      }
      bool give_up = attempt >= policy_.max_attempts || out_of_time();
      if (!give_up) {
        const auto wait = backoff.next();
        ++stats_.retries;
        log::warn("alert {}: attempt {} for job {} failed ({}); retrying in {} ms", name_, attempt, alert.jid, error,
                  wait.count());
        give_up = !wait_to_retry(lock, time_.now() + wait);
      }
      if (give_up) {
        ++stats_.gave_up;
        log::error("alert {}: gave up on job {} after {} attempts: {}", name_, alert.jid, attempt, error);
        break;
      }
    }
  }
  worker_done_ = true;
  wake_.notify_all();
}

}  // namespace salttap::alerting
