#pragma once
// Alerts to the alerts index: each alert becomes one document of the
// DocumentBuilder (<prefix>-alerts-YYYY.MM.DD), spooled and shipped with the
// others. Same payload as the webhook's. Never blocks: the builder only
// buffers; the pipeline thread is the builder's only user.

#include "alerting/alert_outlet.h"
#include "indexer/document_builder.h"

namespace salttap::alerting {

class IndexAlertOutlet final : public AlertOutlet {
 public:
  explicit IndexAlertOutlet(indexer::DocumentBuilder& builder) : builder_(builder) {}
  void send(const correlator::Alert& alert) override { builder_.on_alert(alert); }

 private:
  indexer::DocumentBuilder& builder_;
};

}  // namespace salttap::alerting
