// libFuzzer target: the correlator's checkpoint file (recovery/checkpoint_format.h,
// docs/checkpoint.md).
//
// Input: the file's bytes. Its contract: decode_checkpoint gives a snapshot or
// an error with its reason for every input, never an exception or a crash,
// with heap linear in the input; a snapshot it accepts encodes to bytes that
// decode to the same encoding again; and a correlator that restores it can
// advance and settle every job, with every document built from those jobs
// strict JSON.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <optional>

#include "config/config.h"
#include "pipeline/document_pipeline.h"
#include "recovery/checkpoint_format.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace salttap;
  using namespace salttap::fuzz;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::optional<recovery::DecodedCheckpoint> decoded;
  {
    const HeapPeak heap;
    auto r = recovery::decode_checkpoint(bytes);
    FUZZ_CHECK(is_linear_heap(heap.growth(), size, "decode_checkpoint"));
    if (!r) {
      FUZZ_CHECK(!r.error().why.empty());
      return 0;
    }
    decoded = std::move(r).value();
  }
  const recovery::DecodedCheckpoint& d = *decoded;
  const std::string again = recovery::encode_checkpoint(d.snapshot, d.written_at);
  const auto twice = recovery::decode_checkpoint(again);
  FUZZ_CHECK(twice.has_value());
  FUZZ_CHECK(recovery::encode_checkpoint(twice.value().snapshot, twice.value().written_at) == again);

  static const config::Config kConfig = [] {
    config::Config c = config::default_config();
    c.master_id = "fuzz";
    return c;
  }();
  ManualClock clock(d.written_at);
  pipeline::DocumentPipeline pipeline(kConfig, clock);
  const std::size_t restored = pipeline.correlator().restore(d.snapshot);
  FUZZ_CHECK(restored <= d.snapshot.size());
  FUZZ_CHECK(pipeline.correlator().tracked_jobs() == restored);
  pipeline.advance();
  pipeline.settle_all();
  FUZZ_CHECK(pipeline.correlator().tracked_jobs() == 0);
  for (const auto& doc : pipeline.take_docs()) {
    const std::string_view nd = doc.ndjson;
    const std::size_t action_end = nd.find('\n');
    FUZZ_CHECK(action_end != std::string_view::npos);
    FUZZ_CHECK(is_strict_json(nd.substr(0, action_end)));
    std::string_view source = nd.substr(action_end + 1);
    if (source.ends_with('\n')) source.remove_suffix(1);
    FUZZ_CHECK(is_strict_json(source));
  }
  return 0;
}
