#pragma once
// A diagnostic for the latency benchmark (bench/live_bench.py): with
// SALTTAP_LATENCY_TRACE=<file> in the environment, every job document is
// stamped at each stage on its way to the engine, one line each:
//   <stage>\t<_id>\t<version>\t<unix µs>
// (stages: built = handed to the spool by the pipeline, spooled = appended,
// sent = in a bulk request handed to the HTTP client, acked = the engine
// answered it). With the variable unset (always, outside benchmarks) each
// call only checks a flag. Job documents only: a few per job.

#include <span>
#include <string_view>

#include "indexer/document.h"

namespace salttap::indexer {

enum class TraceStage : unsigned char { built, spooled, sent, acked };

bool latency_trace_on();
// The job documents among `docs`.
void trace_documents(TraceStage stage, std::span<const BulkDoc> docs);
// One job document as the shipper holds it ("<action>\n<source>\n").
void trace_payload(TraceStage stage, std::string_view payload);

}  // namespace salttap::indexer
