// Decode throughput of the master's event-bus stream, side by side:
//   salttap   - StreamDecoder: framing detection, limits, resync, owned Events
//   msgpack   - bare msgpack-c: unpacker over the stream, then the inner data
//               (what any decoder must at least do: the practical limit)
// Salt's own Python decoder runs on the same files from bench/run-decode-bench.
//
// Streams come from bench/make_stream.py (SALTTAP_BENCH_STREAMS, default
// build/bench-streams): small.{plain,len32}.raw, mixed.{plain,len32}.raw.

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tap/internal/stream_decoder.h"

namespace {

constexpr std::size_t kChunk = 256 * 1024;  // what the live reader reads at once

const std::string& stream(const std::string& name) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  const char* dir = std::getenv("SALTTAP_BENCH_STREAMS");
  const std::filesystem::path path = std::filesystem::path(dir ? dir : "build/bench-streams") / name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "missing %s: run bench/run-decode-bench\n", path.c_str());
    std::exit(1);
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return cache.emplace(name, ss.str()).first->second;
}

// `events` (decoded in the last pass) is reported as a counter too: bench/decode_report.py
// checks it against the events bench/make_stream.py wrote into the stream.
void report(benchmark::State& state, std::size_t bytes, std::size_t events) {
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes * state.iterations()));
  state.SetItemsProcessed(static_cast<std::int64_t>(events * state.iterations()));
  state.counters["events"] = static_cast<double>(events);
}

void BM_salttap(benchmark::State& state, const std::string& name) {
  const std::string& bytes = stream(name);
  std::size_t events = 0;
  for (auto _ : state) {
    salttap::tap::StreamDecoder decoder;
    events = 0;
    for (std::size_t off = 0; off < bytes.size(); off += kChunk) {
      decoder.feed(std::string_view(bytes).substr(off, kChunk), [&](salttap::tap::Event&& e) {
        benchmark::DoNotOptimize(e.tag().data());
        ++events;
      });
    }
    if (decoder.events().stats().total_errors() != 0) state.SkipWithError("decode errors");
  }
  report(state, bytes.size(), events);
}

// Unpack the inner data of a frame object: tag split + msgpack::unpack.
bool unpack_body(const msgpack::object& frame, msgpack::zone& zone) {
  if (frame.type != msgpack::type::MAP) return false;
  for (std::uint32_t i = 0; i < frame.via.map.size; ++i) {
    const auto& kv = frame.via.map.ptr[i];
    if (kv.key.type != msgpack::type::STR || kv.key.via.str.size != 4 || std::memcmp(kv.key.via.str.ptr, "body", 4))
      continue;
    const char* p = kv.val.via.bin.ptr;
    const std::size_t n = kv.val.via.bin.size;
    const void* sep = memmem(p, n, "\n\n", 2);
    if (!sep) return false;
    std::size_t off = static_cast<std::size_t>(static_cast<const char*>(sep) - p) + 2;
    bool referenced = false;
    msgpack::object data = msgpack::unpack(zone, p, n, off, referenced);
    benchmark::DoNotOptimize(data.type);
    return true;
  }
  return false;
}

void BM_msgpack_plain(benchmark::State& state, const std::string& name) {
  const std::string& bytes = stream(name);
  std::size_t events = 0;
  for (auto _ : state) {
    msgpack::unpacker unpacker;
    events = 0;
    for (std::size_t off = 0; off < bytes.size(); off += kChunk) {
      const std::size_t n = std::min(kChunk, bytes.size() - off);
      unpacker.reserve_buffer(n);
      std::memcpy(unpacker.buffer(), bytes.data() + off, n);
      unpacker.buffer_consumed(n);
      msgpack::object_handle frame;
      while (unpacker.next(frame)) {
        msgpack::zone zone;
        events += unpack_body(frame.get(), zone);
      }
    }
  }
  report(state, bytes.size(), events);
}

void BM_msgpack_len32(benchmark::State& state, const std::string& name) {
  const std::string& bytes = stream(name);
  std::size_t events = 0;
  for (auto _ : state) {
    events = 0;
    for (std::size_t off = 0; off + 4 <= bytes.size();) {
      const auto* u = reinterpret_cast<const unsigned char*>(bytes.data() + off);
      const std::size_t n = (std::size_t(u[0]) << 24) | (std::size_t(u[1]) << 16) | (std::size_t(u[2]) << 8) | u[3];
      msgpack::zone zone;
      std::size_t frame_off = 0;
      bool referenced = false;
      msgpack::object frame = msgpack::unpack(zone, bytes.data() + off + 4, n, frame_off, referenced);
      events += unpack_body(frame, zone);
      off += 4 + n;
    }
  }
  report(state, bytes.size(), events);
}

}  // namespace

#define SALTTAP_BENCH(fn, file) \
  BENCHMARK_CAPTURE(fn, file, std::string(file))->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime()

SALTTAP_BENCH(BM_salttap, "small.plain.raw");
SALTTAP_BENCH(BM_msgpack_plain, "small.plain.raw");
SALTTAP_BENCH(BM_salttap, "small.len32.raw");
SALTTAP_BENCH(BM_msgpack_len32, "small.len32.raw");
SALTTAP_BENCH(BM_salttap, "mixed.plain.raw");
SALTTAP_BENCH(BM_msgpack_plain, "mixed.plain.raw");
SALTTAP_BENCH(BM_salttap, "mixed.len32.raw");
SALTTAP_BENCH(BM_msgpack_len32, "mixed.len32.raw");

BENCHMARK_MAIN();
