// Spool throughput: append a batch of 1 KiB documents, take it, ack it, per
// fsync policy and batch size. The spool lives under $TMPDIR (a real disk
// unless that is tmpfs: fsync costs are what this measures).
//
//   cmake --preset bench && cmake --build --preset bench --target spool-bench
//   build/bench/bench/spool-bench [--benchmark_filter=...]

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "indexer/spool.h"

namespace {

namespace fs = std::filesystem;
using namespace salttap::indexer;  // the spool, its config and documents

constexpr std::size_t kDocBytes = 1024;

fs::path make_dir() {
  std::string tmpl = (fs::temp_directory_path() / "salttap-spool-bench-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp");
  return tmpl;
}

std::vector<BulkDoc> batch_of(std::size_t n) {
  std::vector<BulkDoc> docs;
  for (std::size_t i = 0; i < n; ++i) {
    std::string line = "{\"create\":{\"_index\":\"salt-events-2026.11.29\",\"_id\":\"" + std::to_string(i) + "\"}}\n";
    std::string source = "{\"tag\":\"salt/job/20261129/ret/minion\",\"data\":\"";
    source.append(kDocBytes - line.size() - source.size() - 3, 'x');
    source += "\"}\n";
    docs.push_back(BulkDoc{DocClass::event, line + source});
  }
  return docs;
}

void BM_AppendTakeAck(benchmark::State& state) {
  const auto policy = static_cast<FsyncPolicy>(state.range(0));
  const auto batch = static_cast<std::size_t>(state.range(1));
  const fs::path dir = make_dir();
  {
    SpoolConfig c;
    c.dir = dir;
    c.fsync = policy;
    c.fsync_interval = std::chrono::milliseconds(1000);
    Spool spool(c);
    const auto docs = batch_of(batch);
    std::vector<std::uint64_t> ids;
    for (auto _ : state) {
      const auto appended = spool.append(docs);
      if (appended.spooled != batch) state.SkipWithError("append refused documents");
      const auto records = spool.take(batch, 64u << 20, std::chrono::milliseconds(0));
      ids.clear();
      for (const auto& r : records) ids.push_back(r.id);
      spool.ack(ids);
      benchmark::DoNotOptimize(records.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * batch * kDocBytes));
    state.counters["fsyncs"] = static_cast<double>(spool.stats().fsyncs);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

void policies(benchmark::internal::Benchmark* b) {
  b->ArgNames({"fsync", "batch"});
  for (const auto policy : {FsyncPolicy::never, FsyncPolicy::interval, FsyncPolicy::every_batch})
    for (const int batch : {1, 100, 1000}) b->Args({static_cast<int>(policy), batch});
}

// fsync: 0 every_batch, 1 interval (1 s), 2 never (FsyncPolicy's order).
BENCHMARK(BM_AppendTakeAck)->Apply(policies)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
