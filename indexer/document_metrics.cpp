#include "indexer/document_metrics.h"

namespace salttap::indexer {

void publish_document_metrics(Metrics& m, const DocumentStats& s) {
  using enum MetricId;
  for (std::size_t c = 0; c < kDocClasses; ++c)
    m.counter(indexer_documents_built, {to_string(static_cast<DocClass>(c))}, s.built[c]);
  m.counter(indexer_documents_skipped, {"function_filter"}, s.skipped_by_function);
  m.counter(indexer_documents_skipped, {"event_tag_filter"}, s.events_filtered);
  m.counter(indexer_truncated_returns, s.returns_truncated);
  m.counter(indexer_redactions, s.redactions);
}

}  // namespace salttap::indexer
