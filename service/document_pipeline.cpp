#include "service/document_pipeline.h"

#include <unistd.h>

#include "alerting/index_alert_outlet.h"

namespace salttap::service {
namespace {

indexer::DocumentOptions document_options(const Config& config, const std::string& master_id) {
  indexer::DocumentOptions o = config.indexer.documents;
  o.master_id = master_id;
  return o;
}

}  // namespace

std::string effective_master_id(const Config& config) {
  if (!config.master_id.empty()) return config.master_id;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == 0) return "master";
  return std::string(host) + "_master";
}

DocumentPipeline::DocumentPipeline(const Config& config, const Clock& clock)
    : master_id_(effective_master_id(config)),
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

void DocumentPipeline::reconfigure(const Config& next) {
  correlator_.reconfigure(next.correlator, next.auditor, next.redactor);
  builder_.reconfigure(next.indexer.documents, next.redactor);
  alerts_.set_config(next.alerts);
}

void DocumentPipeline::on_event(const tap::Event& event) {
  builder_.on_event(event);
  correlator_.on_event(event);
}

}  // namespace salttap::service
