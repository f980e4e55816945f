#pragma once
// Where alerts go. None of them may block the pipeline: the log outlet is a
// line, the others hand the alert to a worker thread with a bounded queue
// (a full queue drops the alert, counted and logged) and retry with capped
// exponential backoff and full jitter.
//
//   LogAlertOutlet      one WARN line per alert
//   WebhookAlertOutlet  HTTP POST of the JSON payload (libcurl); 2xx = done,
//                       anything else or a transport error = retry
//   FireAlertOutlet     event salttap/alert/<kind>/<jid> on the master bus,
//                       for reactors (opt-in; see tap/event_firer.h)
//   AlertDispatcher     makes the alert when a job settles, counts alerts per
//                       kind, fans out to the outlets

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "correlator/alert.h"
#include "correlator/correlator.h"
#include "tap/endpoint.h"
#include "tap/frame_decoder.h"

namespace salttap::correlator {

class AlertOutlet {
 public:
  virtual ~AlertOutlet() = default;
  virtual void send(const Alert& alert) = 0;  // never blocks
};

class LogAlertOutlet final : public AlertOutlet {
 public:
  void send(const Alert& alert) override;
};

struct RetryPolicy {
  int max_attempts = 8;
  std::chrono::milliseconds initial{1000};
  std::chrono::milliseconds max{60'000};
  std::size_t queue_cap = 10'000;
};

struct OutletStats {
  std::atomic<std::uint64_t> delivered{0};
  std::atomic<std::uint64_t> attempts{0};
  std::atomic<std::uint64_t> retries{0};
  std::atomic<std::uint64_t> dropped_queue_full{0};
  std::atomic<std::uint64_t> gave_up{0};
};

// Worker thread + bounded queue + retries; subclasses only deliver().
class AsyncAlertOutlet : public AlertOutlet {
 public:
  AsyncAlertOutlet(std::string name, RetryPolicy policy);
  ~AsyncAlertOutlet() override;
  void send(const Alert& alert) override;
  // Stops after the queue drains or `timeout` passes (retries are abandoned).
  void stop(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  const OutletStats& stats() const { return stats_; }

 protected:
  void start();
  // One attempt; returns an error text, empty on success.
  virtual std::string deliver(const Alert& alert) = 0;

 private:
  void run();

  std::string name_;
  RetryPolicy policy_;
  OutletStats stats_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Alert> queue_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point stop_deadline_{};
  std::thread thread_;
};

struct WebhookConfig {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::chrono::milliseconds timeout{10'000};
  RetryPolicy retry;
};

class WebhookAlertOutlet final : public AsyncAlertOutlet {
 public:
  explicit WebhookAlertOutlet(WebhookConfig config);
  ~WebhookAlertOutlet() override;

 private:
  std::string deliver(const Alert& alert) override;
  WebhookConfig config_;
};

class FireAlertOutlet final : public AsyncAlertOutlet {
 public:
  // `pull_framing` unknown: probed (against `pub`) before the first alert.
  FireAlertOutlet(tap::Endpoint pub, tap::Endpoint pull, tap::Framing pull_framing = tap::Framing::unknown,
                  RetryPolicy retry = {});
  ~FireAlertOutlet() override;

 private:
  std::string deliver(const Alert& alert) override;
  tap::Endpoint pub_, pull_;
  tap::Framing framing_;
};

class AlertDispatcher {
 public:
  AlertDispatcher(AlertConfig config, std::string master_id = {}) : config_(config), master_id_(std::move(master_id)) {}
  void add(std::shared_ptr<AlertOutlet> outlet) { outlets_.push_back(std::move(outlet)); }
  // Wire as (part of) the Correlator's sink.
  void on_job(JobUpdate update, const Job& job, const MinionRegistry& minions);
  // An alert not made from a job (spool_full): counted and sent to every outlet.
  void dispatch(const Alert& alert);
  std::uint64_t count(AlertKind kind) const { return counts_[static_cast<std::size_t>(kind)].load(); }

 private:
  AlertConfig config_;
  std::string master_id_;
  std::vector<std::shared_ptr<AlertOutlet>> outlets_;
  std::atomic<std::uint64_t> counts_[kAlertKinds]{};
};

}  // namespace salttap::correlator
