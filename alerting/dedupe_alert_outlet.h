#pragma once
// alerts.dedupe: engine - one delivery of a job's alert across every salttap
// of a fleet (several masters of one minion, a syndic's masters, an HA pair).
// Before the outlets it wraps (log, webhook, bus event) see a job's alert,
// its worker creates one deterministic document in the engine,
// `<prefix>-alerts-<day>/_create/<fleet>/job/<jid>` (salttap.doc
// "alert_claims"), with a short timeout:
//
//   201        this salttap is the first: deliver
//   409        another salttap of the fleet delivered it: skip, counted, one INFO line
//   otherwise  (no answer, a timeout, any other status): deliver anyway,
//              counted, one WARN line - a duplicate is better than a miss
//
// An orphan job's alert (returns without a `new`: the master that published
// the job is another) waits `orphan_delay` first, so that the publishing
// master's salttap, whose alert names the user, arguments and target,
// normally wins. Alerts not about a job (spool_full, fleet silence, …) pass
// at once: they are facts of this salttap or this master.
//
// send() only queues: the claim runs on the outlet's own thread, never on
// the pipeline's. stop(timeout) claims and forwards what is queued (delays
// cut short) until the timeout, then forwards the rest unclaimed.
// Reference: docs/masters.md.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "alerting/alert_outlet.h"
#include "common/steady_time.h"
#include "http/http_client.h"
#include "indexer/index_layout.h"

namespace salttap::alerting {

struct DedupeConfig {
  http::HttpClientConfig http;  // the indexer's engine: hosts, TLS, auth
  indexer::IndexLayout layout;
  std::string fleet, master;
  std::chrono::milliseconds timeout{2000};       // per claim
  std::chrono::milliseconds orphan_delay{5000};  // an orphan job's alert waits this long first
  bool operator==(const DedupeConfig& o) const;
};

enum class ClaimResult : std::uint8_t { claimed, duplicate, failed };

// The claim's `_id` for this alert, "<fleet>/job/<jid>"; empty: an alert
// that is not deduplicated (no job).
std::string claim_id(const correlator::Alert& alert, std::string_view fleet);
// PUT /<alerts index of the job's day>/_create/<claim_id, percent-encoded>.
http::HttpRequest claim_request(const correlator::Alert& alert, const DedupeConfig& config);
// 201 claimed, 409 duplicate, anything else failed.
ClaimResult claim_result(const http::HttpResponse& response);

struct DedupeStats {
  std::atomic<std::uint64_t> claimed{0};      // delivered: the first of the fleet
  std::atomic<std::uint64_t> duplicates{0};   // not delivered: another salttap had
  std::atomic<std::uint64_t> failed_open{0};  // delivered without a claim: the engine did not answer 201/409
  std::atomic<std::uint64_t> passed{0};       // not about a job: delivered without a claim
};

class DedupeAlertOutlet final : public AlertOutlet {
 public:
  DedupeAlertOutlet(std::vector<std::shared_ptr<AlertOutlet>> inner, std::unique_ptr<http::HttpClient> http,
                    DedupeConfig config, SteadyTime& time = real_steady_time());
  ~DedupeAlertOutlet() override;  // stop(0)
  void send(const correlator::Alert& alert) override;
  void stop(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  const DedupeStats& stats() const { return stats_; }

 private:
  void run();
  void deliver(const correlator::Alert& alert, bool claim);

  std::vector<std::shared_ptr<AlertOutlet>> inner_;
  std::unique_ptr<http::HttpClient> http_;
  DedupeConfig config_;
  SteadyTime& time_;
  DedupeStats stats_;
  std::mutex stop_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::multimap<SteadyTime::time_point, correlator::Alert> queue_;  // by when each may be claimed
  bool stopping_ = false;
  SteadyTime::time_point stop_deadline_{};
  std::thread thread_;
};

}  // namespace salttap::alerting
