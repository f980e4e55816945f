#pragma once
// Prometheus samples of the document builder (docs/operations.md "Metrics").

#include "common/metrics.h"
#include "indexer/document_builder.h"

namespace salttap::indexer {

void publish_document_metrics(Metrics& metrics, const DocumentStats& stats);

}  // namespace salttap::indexer
