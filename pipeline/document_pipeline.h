#pragma once
// Events -> documents: the correlator with the DocumentBuilder as its
// observer, the alert dispatcher (whose outlets include the alerts index),
// and raw events. Driven by the event loop (pipeline/event_loop.h) for
// `salttap run`, `replay --ship` and `replay --output documents`.
// Single-threaded: the pipeline thread.

#include <memory>
#include <string>
#include <vector>

#include "alerting/alert_dispatcher.h"
#include "config/config.h"
#include "correlator/correlator.h"
#include "fleet/fleet_tracker.h"
#include "indexer/document_builder.h"
#include "tap/event.h"

namespace salttap::pipeline {

class DocumentPipeline {
 public:
  DocumentPipeline(const config::Config& config, const Clock& clock);

  // Extra alert outlets (log, webhook, bus event); the alerts index is built in.
  void add_alert_outlet(std::shared_ptr<alerting::AlertOutlet> outlet) { alerts_.add(std::move(outlet)); }
  // A config reload: the extra outlets become `outlets` (the alerts index stays).
  void set_alert_outlets(const std::vector<std::shared_ptr<alerting::AlertOutlet>>& outlets);
  // A config reload (daemon/internal/config_reload.h): the correlator's settings,
  // audit rules and redaction, the document filters and the alert settings
  // of `next` apply from the next event on; open jobs stay open
  // (Correlator::reconfigure). The master id and where documents go stay.
  void reconfigure(const config::Config& next);

  // `run`: every event also goes to the fleet (not owned; null: none).
  void set_fleet(fleet::FleetTracker* fleet) { fleet_ = fleet; }
  // A fleet sweep's outcome: its notices to every alert outlet, its episode
  // records to the alerts index alone.
  void deliver(const fleet::SweepOutcome& outcome);

  void on_event(const tap::Event& event);
  void advance() { correlator_.advance(); }
  // End of a replay: every open job settles and is emitted final.
  void settle_all() { correlator_.settle_all(); }

  std::vector<indexer::BulkDoc> take_docs() { return builder_.take_docs(); }
  bool has_docs() const { return builder_.has_docs(); }

  const std::string& master_id() const { return master_id_; }
  const Clock& clock() const { return clock_; }
  correlator::Correlator& correlator() { return correlator_; }
  const alerting::AlertDispatcher& alerts() const { return alerts_; }
  alerting::AlertDispatcher& alerts() { return alerts_; }
  const indexer::DocumentBuilder& documents() const { return builder_; }
  indexer::DocumentBuilder& documents() { return builder_; }

 private:
  std::string master_id_;
  const Clock& clock_;
  indexer::DocumentBuilder builder_;
  alerting::AlertDispatcher alerts_;
  correlator::Correlator correlator_;
  std::shared_ptr<alerting::AlertOutlet> index_outlet_;
  fleet::FleetTracker* fleet_ = nullptr;
};

}  // namespace salttap::pipeline
