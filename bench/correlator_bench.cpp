// The correlator's cost next to the decoder's, on 10,000-minion jobs shaped
// like the captured test.ping jobs, and its memory per pending minion with
// 100 jobs x 10,000 minions in flight.
//
//   decode            StreamDecoder over the stream (the tap's cost)
//   decode+correlate  the same, each event through the Correlator
// correlator cost per event = (decode+correlate - decode) / events.

#include <benchmark/benchmark.h>

#include <malloc.h>

#include <fmt/format.h>

#include "correlator/correlator.h"
#include "tap/internal/stream_decoder.h"

namespace {

using namespace salttap;
constexpr int kMinions = 10'000;

void pack_str(msgpack::packer<msgpack::sbuffer>& pk, std::string_view s) { pk.pack(s); }

// One plain frame: {"head": {}, "body": tag "\n\n" data}.
void frame(std::string& out, std::string_view tag, const msgpack::sbuffer& data) {
  std::string body(tag);
  body += "\n\n";
  body.append(data.data(), data.size());
  msgpack::sbuffer f;
  msgpack::packer<msgpack::sbuffer> pk(f);
  pk.pack_map(2);
  pack_str(pk, "head");
  pk.pack_map(0);
  pack_str(pk, "body");
  pk.pack_bin(static_cast<std::uint32_t>(body.size()));
  pk.pack_bin_body(body.data(), static_cast<std::uint32_t>(body.size()));
  out.append(f.data(), f.size());
}

std::string minion(int i) { return fmt::format("minion-{:05d}.example.com", i); }
std::string jid_of(int j) { return fmt::format("2026112919{:04d}{:06d}", j / 100, j % 1000000); }

void new_event(std::string& out, const std::string& jid, const std::string& stamp) {
  msgpack::sbuffer d;
  msgpack::packer<msgpack::sbuffer> pk(d);
  pk.pack_map(9);
  pack_str(pk, "jid"), pack_str(pk, jid);
  pack_str(pk, "tgt_type"), pack_str(pk, "glob");
  pack_str(pk, "tgt"), pack_str(pk, "*");
  pack_str(pk, "user"), pack_str(pk, "root");
  pack_str(pk, "fun"), pack_str(pk, "test.ping");
  pack_str(pk, "arg"), pk.pack_array(0);
  pack_str(pk, "minions"), pk.pack_array(kMinions);
  for (int i = 0; i < kMinions; ++i) pack_str(pk, minion(i));
  pack_str(pk, "missing"), pk.pack_array(0);
  pack_str(pk, "_stamp"), pack_str(pk, stamp);
  frame(out, "salt/job/" + jid + "/new", d);
}

void ret_event(std::string& out, const std::string& jid, int i, const std::string& stamp) {
  msgpack::sbuffer d;
  msgpack::packer<msgpack::sbuffer> pk(d);
  pk.pack_map(11);
  pack_str(pk, "cmd"), pack_str(pk, "_return");
  pack_str(pk, "id"), pack_str(pk, minion(i));
  pack_str(pk, "success"), pk.pack_true();
  pack_str(pk, "return"), pk.pack_true();
  pack_str(pk, "retcode"), pk.pack(0);
  pack_str(pk, "jid"), pack_str(pk, jid);
  pack_str(pk, "fun"), pack_str(pk, "test.ping");
  pack_str(pk, "fun_args"), pk.pack_array(0);
  pack_str(pk, "user"), pack_str(pk, "root");
  pack_str(pk, "_stamp"), pack_str(pk, stamp);
  pack_str(pk, "ts"), pk.pack(1795980268);
  frame(out, "salt/job/" + jid + "/ret/" + minion(i), d);
}

// The events stream(jobs) holds: each job's new event and one return per minion.
std::size_t events_of(int jobs) { return static_cast<std::size_t>(jobs) * (kMinions + 1); }

// `jobs` jobs of kMinions minions each; returns interleave across 4 jobs in flight.
const std::string& stream(int jobs) {
  static std::map<int, std::string> cache;
  auto& s = cache[jobs];
  if (!s.empty()) return s;
  for (int j = 0; j < jobs; j += 4) {
    for (int k = j; k < j + 4 && k < jobs; ++k) new_event(s, jid_of(k), "2026-11-29T19:24:28.538693");
    for (int i = 0; i < kMinions; ++i)
      for (int k = j; k < j + 4 && k < jobs; ++k) ret_event(s, jid_of(k), i, "2026-11-29T19:24:29.000000");
  }
  return s;
}

// Decodes the stream as the bus reader does, 256 KiB at a time, each event to
// `on_event`; how many events it decoded.
template <typename OnEvent>
std::size_t decode_stream(const std::string& bytes, OnEvent on_event) {
  tap::StreamDecoder decoder;
  std::size_t events = 0;
  for (std::size_t off = 0; off < bytes.size(); off += 256 * 1024)
    decoder.feed(std::string_view(bytes).substr(off, 256 * 1024), [&](tap::Event&& e) {
      on_event(e);
      ++events;
    });
  return events;
}

// The run fails unless every event of the stream was decoded; the per-event figures.
void count_events(benchmark::State& state, std::size_t events) {
  if (events != events_of(static_cast<int>(state.range(0)))) state.SkipWithError("not every event decoded");
  state.SetItemsProcessed(static_cast<std::int64_t>(events * state.iterations()));
  state.counters["events"] = static_cast<double>(events);
  state.counters["ns_per_event"] = benchmark::Counter(static_cast<double>(events) * state.iterations(),
                                                      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_decode(benchmark::State& state) {
  const std::string& bytes = stream(static_cast<int>(state.range(0)));
  std::size_t events = 0;
  for (auto _ : state)
    events = decode_stream(bytes, [](const tap::Event& e) { benchmark::DoNotOptimize(e.tag().data()); });
  count_events(state, events);
}

void BM_decode_correlate(benchmark::State& state) {
  const std::string& bytes = stream(static_cast<int>(state.range(0)));
  std::size_t events = 0, settled = 0;
  for (auto _ : state) {
    ManualClock clock(0);
    correlator::Correlator corr({}, clock, [&](correlator::JobUpdate u, const correlator::Job&) {
      settled += u == correlator::JobUpdate::settled;
    });
    events = decode_stream(bytes, [&](const tap::Event& e) { corr.on_event(e); });
  }
  if (settled != static_cast<std::size_t>(state.range(0)) * state.iterations()) state.SkipWithError("jobs not settled");
  count_events(state, events);
}

// 100 jobs x 10,000 minions, no returns yet: every minion pending.
void BM_memory_pending(benchmark::State& state) {
  std::string news;
  for (int j = 0; j < 100; ++j) new_event(news, jid_of(j), "2026-11-29T19:24:28.538693");
  double per_minion_heap = 0, per_minion_accounted = 0;
  for (auto _ : state) {
    malloc_trim(0);
    const auto before = mallinfo2().uordblks;
    {
      ManualClock clock(0);
      correlator::Correlator corr({}, clock, [](correlator::JobUpdate, const correlator::Job&) {});
      tap::StreamDecoder decoder;
      decoder.feed(news, [&](tap::Event&& e) { corr.on_event(e); });
      const auto after = mallinfo2().uordblks;
      per_minion_heap = static_cast<double>(after - before) / (100.0 * kMinions);
      per_minion_accounted = static_cast<double>(corr.memory_bytes()) / (100.0 * kMinions);
      if (corr.tracked_jobs() != 100) state.SkipWithError("jobs not tracked");
    }
  }
  state.counters["heap_bytes_per_pending_minion"] = per_minion_heap;
  state.counters["accounted_bytes_per_pending_minion"] = per_minion_accounted;
}

}  // namespace

BENCHMARK(BM_decode)->Arg(40)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_decode_correlate)->Arg(40)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_memory_pending)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
