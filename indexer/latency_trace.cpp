#include "indexer/latency_trace.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include <fmt/format.h>
#include "common/enum_names.h"

namespace salttap::indexer {

namespace {

struct TraceFile {
  std::mutex mutex;
  std::FILE* file = nullptr;
  TraceFile() {
    const char* path = std::getenv("SALTTAP_LATENCY_TRACE");
    if (path != nullptr && *path != '\0') file = std::fopen(path, "ae");
  }
  ~TraceFile() {
    if (file != nullptr) std::fclose(file);
  }
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
};

TraceFile& trace_file() {
  static TraceFile t;
  return t;
}

std::string_view name(TraceStage s) { return enumerator_name(s, "unknown"); }

// The value of "key": in the action line: a string's characters, or a number's digits.
std::string_view field(std::string_view action, std::string_view key) {
  const auto at = action.find(key);
  if (at == std::string_view::npos) return {};
  auto begin = at + key.size();
  const bool quoted = begin < action.size() && action[begin] == '"';
  if (quoted) ++begin;
  auto end = begin;
  while (end < action.size() && (quoted ? action[end] != '"' : (action[end] >= '0' && action[end] <= '9'))) ++end;
  return action.substr(begin, end - begin);
}

void write(TraceStage stage, std::string_view action, std::int64_t micros) {
  TraceFile& t = trace_file();
  const std::string line =
      fmt::format("{}\t{}\t{}\t{}\n", name(stage), field(action, "\"_id\":"), field(action, "\"version\":"), micros);
  std::lock_guard lock(t.mutex);
  std::fwrite(line.data(), 1, line.size(), t.file);
  std::fflush(t.file);
}

std::int64_t now_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool latency_trace_on() { return trace_file().file != nullptr; }

void trace_documents(TraceStage stage, std::span<const BulkDoc> docs) {
  if (!latency_trace_on()) return;
  const auto micros = now_micros();
  for (const BulkDoc& d : docs)
    if (d.cls == DocClass::job) write(stage, std::string_view(d.ndjson).substr(0, d.ndjson.find('\n')), micros);
}

void trace_payload(TraceStage stage, std::string_view payload) {
  if (!latency_trace_on()) return;
  write(stage, payload.substr(0, payload.find('\n')), now_micros());
}

}  // namespace salttap::indexer
