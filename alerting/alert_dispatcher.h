#pragma once
// Makes the alert when a job settles (correlator/alert.h: one per job, late
// returns never alert again), counts alerts by kind, and fans every alert
// out to the outlets. Runs on the pipeline thread; the outlets never block it.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "alerting/alert_outlet.h"
#include "correlator/alert.h"
#include "correlator/correlator.h"

namespace salttap::alerting {

class AlertDispatcher {
 public:
  explicit AlertDispatcher(correlator::AlertConfig config, std::string master_id = {})
      : config_(config), master_id_(std::move(master_id)) {}
  void add(std::shared_ptr<AlertOutlet> outlet) { outlets_.push_back(std::move(outlet)); }
  // A config reload: the alerts made from now on follow `config`, and go to
  // `outlets` (in place of every outlet added so far). The counts go on.
  void set_config(const correlator::AlertConfig& config) { config_ = config; }
  void set_outlets(std::vector<std::shared_ptr<AlertOutlet>> outlets) { outlets_ = std::move(outlets); }
  const correlator::AlertConfig& config() const { return config_; }
  // Wire as (part of) the Correlator's sink.
  void on_job(correlator::JobUpdate update, const correlator::Job& job, const correlator::MinionRegistry& minions);
  // An alert not made from a job (spool_full): counted and sent to every outlet.
  void dispatch(const correlator::Alert& alert);
  std::uint64_t count(correlator::AlertKind kind) const { return counts_[static_cast<std::size_t>(kind)].load(); }

 private:
  correlator::AlertConfig config_;
  std::string master_id_;
  std::vector<std::shared_ptr<AlertOutlet>> outlets_;
  std::atomic<std::uint64_t> counts_[correlator::kAlertKinds]{};
};

}  // namespace salttap::alerting
