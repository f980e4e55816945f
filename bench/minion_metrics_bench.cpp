// The per-minion gauges' cost (fleet/minion_metrics.h) for a fleet of N
// minions, all exported: what a sweep pays to render them (publish), and
// what a scrape of /metrics pays (Metrics::render with their lines and the
// rest of a running salttap's families, approximated by the fleet's own).
//
//   cmake --preset bench && cmake --build --preset bench --target minion-metrics-bench
//   build/bench/bench/minion-metrics-bench [--benchmark_filter=...]

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/metrics.h"
#include "fleet/fleet_tracker.h"
#include "fleet/minion_metrics.h"
#include "tap/event_from_json.h"
#include "tap/internal/event_decoder.h"

namespace {

using namespace salttap;
using namespace salttap::fleet;

constexpr Micros kT0 = 1'800'000'000 * kMicrosPerSecond;

tap::Event ret(const std::string& minion, bool highstate) {
  const std::string json = fmt::format(
      R"({{"tag": "salt/job/20261205120000123456/ret/{0}", "data": {{"id": "{0}", "fun": "{1}", "fun_args": [],)"
      R"( "retcode": 0, "return": {{"a_|-b_|-c_|-d": {{"result": true, "__run_num__": 0}}}}}}}})",
      minion, highstate ? "state.highstate" : "test.ping");
  std::string error;
  auto body = tap::event_body_from_json(json, &error);
  tap::EventDecoder decoder;
  return std::move(*decoder.decode_body(*body));
}

// A swept fleet of `n` minions, every one heard and highstated, all exported.
std::unique_ptr<FleetTracker> fleet_of(std::size_t n) {
  FleetConfig c;
  c.minion_metrics.enabled = true;
  c.minion_metrics.max_minions = n;
  auto t = std::make_unique<FleetTracker>(c, "m", kT0);
  t->observe_hearing(true, kT0);
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < n; ++i) keys.push_back(fmt::format("minion-{:05}.example.com", i));
  (void)t->set_keys(keys, kT0);
  for (const auto& k : keys) t->on_event(ret(k, true), kT0 + 1000);
  (void)t->sweep(kT0 + 2000);
  return t;
}

// One sweep's rendering: select, order, render the three families into Metrics.
void BM_PublishPerSweep(benchmark::State& state) {
  auto fleet = fleet_of(static_cast<std::size_t>(state.range(0)));
  Metrics metrics;
  MinionMetricsExporter exporter;
  Micros now = kT0 + 3000;
  for (auto _ : state) {
    (void)fleet->sweep(now += 1000);  // a new sweep: the exporter renders again
    exporter.publish(metrics, *fleet);
  }
  state.SetLabel(fmt::format("{} series", 3 * state.range(0)));
}
BENCHMARK(BM_PublishPerSweep)->Arg(100)->Arg(1000)->Arg(8000)->Unit(benchmark::kMicrosecond);

// The sweep alone, for comparison: what the fleet pays every sweep anyway.
void BM_SweepAlone(benchmark::State& state) {
  auto fleet = fleet_of(static_cast<std::size_t>(state.range(0)));
  Micros now = kT0 + 3000;
  for (auto _ : state) (void)fleet->sweep(now += 1000);
}
BENCHMARK(BM_SweepAlone)->Arg(100)->Arg(1000)->Arg(8000)->Unit(benchmark::kMicrosecond);

// One scrape: the whole exposition text, the per-minion lines appended whole.
void BM_RenderPerScrape(benchmark::State& state) {
  auto fleet = fleet_of(static_cast<std::size_t>(state.range(0)));
  Metrics metrics;
  MinionMetricsExporter exporter;
  exporter.publish(metrics, *fleet);
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = metrics.render();
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetLabel(fmt::format("{} bytes", bytes));
}
BENCHMARK(BM_RenderPerScrape)->Arg(0)->Arg(1000)->Arg(8000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
