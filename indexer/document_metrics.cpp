#include "indexer/document_metrics.h"

#include <fmt/format.h>

namespace salttap::indexer {

void publish_document_metrics(Metrics& m, const DocumentStats& s) {
  for (std::size_t c = 0; c < kDocClasses; ++c)
    m.counter(fmt::format("salttap_documents_built_total{{class=\"{}\"}}", to_string(static_cast<DocClass>(c))),
              s.built[c], "Documents built for the indexer");
  m.counter("salttap_documents_skipped_total{reason=\"function_filter\"}", s.skipped_by_function,
            "Documents not built, by reason (functions_blacklist / whitelist, events include / exclude)");
  m.counter("salttap_documents_skipped_total{reason=\"event_tag_filter\"}", s.events_filtered);
  m.counter("salttap_documents_returns_truncated_total", s.returns_truncated,
            "Returns whose return_text was cut at text_cap_bytes (the raw return is whole)");
  m.counter("salttap_documents_redactions_total", s.redactions, "Secrets replaced in returns and event data");
}

}  // namespace salttap::indexer
