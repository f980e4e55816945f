#include "pipeline/document_pipeline.h"

#include "alerting/index_alert_outlet.h"
#include "config/resolve.h"

namespace salttap::pipeline {
namespace {

indexer::DocumentOptions document_options(const config::Config& config, const std::string& master_id) {
  indexer::DocumentOptions o = config.indexer.documents;
  o.master_id = master_id;
  o.fleet_id = config::effective_fleet_id(config, tap::MasterBus{});
  return o;
}

}  // namespace

DocumentPipeline::DocumentPipeline(const config::Config& config, const Clock& clock)
    : master_id_(config::effective_master_id(config, tap::MasterBus{})),
      clock_(clock),
      builder_(document_options(config, master_id_), config.redactor, clock),
      alerts_(config.alerts, master_id_),
      correlator_(
          config.correlator, clock,
          [this](correlator::JobUpdate update, const correlator::Job& job) {
            builder_.on_job(update, job);
            alerts_.on_job(update, job, correlator_.minions());
          },
          config.auditor, config.redactor) {
  builder_.set_minions(&correlator_.minions());
  correlator_.set_observer(&builder_);
  index_outlet_ = std::make_shared<alerting::IndexAlertOutlet>(builder_);
  alerts_.add(index_outlet_);
}

void DocumentPipeline::set_alert_outlets(const std::vector<std::shared_ptr<alerting::AlertOutlet>>& outlets) {
  std::vector<std::shared_ptr<alerting::AlertOutlet>> all{index_outlet_};
  all.insert(all.end(), outlets.begin(), outlets.end());
  alerts_.set_outlets(std::move(all));
}

void DocumentPipeline::reconfigure(const config::Config& next) {
  correlator_.reconfigure(next.correlator, next.auditor, next.redactor);
  builder_.reconfigure(next.indexer.documents, next.redactor);
  alerts_.set_config(next.alerts);
}

void DocumentPipeline::deliver(const fleet::SweepOutcome& outcome) {
  for (const auto& alert : outcome.notices) alerts_.dispatch(alert);
  for (const auto& record : outcome.records) builder_.on_alert(record);
  for (const auto& e : outcome.entities) builder_.on_minion_entity(e.minion, e.version, e.updated_at, e.json);
}

void DocumentPipeline::on_event(const tap::Event& event) {
  builder_.on_event(event);
  correlator_.on_event(event);
  if (fleet_) fleet_->on_event(event, clock_.now());
}

}  // namespace salttap::pipeline
