// libFuzzer target: the JSON transcoder (tap/json_transcoder.h) against the
// renderer it stands in for, on any input.
//
// The input is taken as one frame, as one bare body and as a stream of
// frames, with production limits and with tiny ones. Each time the
// transcoder must agree with decoding into an Event and rendering it with
// append_event_json: the same success or failure, the same error text and
// counts, byte-identical JSON (and strict JSON, linear in the input). On the
// raw value, transcode_msgpack_json must stop with build_tree's status at
// build_tree's offset and print what append_msgpack_json prints; and
// append_msgpack_json (the tree renderer of the documents, which no longer
// goes through RapidJSON) must print the data as append_event_json does.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "common/json_escape.h"
#include "tap/event_to_json.h"
#include "tap/internal/event_decoder.h"
#include "tap/internal/json_transcoder.h"
#include "tap/internal/stream_decoder.h"
#include "tap/internal/stream_transcoder.h"
#include "tap/msgpack_tree.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/tiny_limits.h"

namespace {

using namespace salttap::tap;

void report(std::string_view what, std::string_view want, std::string_view got) {
  std::fprintf(stderr, "%.*s differs:\n  renderer:   %.*s\n  transcoder: %.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(want.size() > 2000 ? 2000 : want.size()), want.data(),
               static_cast<int>(got.size() > 2000 ? 2000 : got.size()), got.data());
}

void same_event(std::string_view input, const DecodeLimits& limits, bool as_body) {
  EventDecoder old_decoder(limits), new_decoder(limits);
  const auto event = as_body ? old_decoder.decode_body(input) : old_decoder.decode_frame(input);
  std::string got = "[";
  const bool ok = as_body ? new_decoder.transcode_body(input, got) : new_decoder.transcode_frame(input, got);
  if (event.has_value() != ok)
    std::fprintf(stderr, "renderer: %s, transcoder: %s\n", event ? "ok" : old_decoder.last_error().c_str(),
                 ok ? "ok" : new_decoder.last_error().c_str());
  FUZZ_CHECK(event.has_value() == ok);
  FUZZ_CHECK(old_decoder.stats().events == new_decoder.stats().events);
  FUZZ_CHECK(old_decoder.stats().errors == new_decoder.stats().errors);
  if (!ok) {
    FUZZ_CHECK(old_decoder.last_error() == new_decoder.last_error());
    FUZZ_CHECK(got == "[");
    return;
  }
  std::string want = "[";
  append_event_json(want, *event);
  if (want != got) report(as_body ? "body" : "frame", want, got);
  FUZZ_CHECK(want == got);
  // append_msgpack_json (the documents' renderer of a decoded tree) writes
  // the data as RapidJSON's writer does inside append_event_json.
  std::string assembled = R"([{"tag":)";
  salttap::json::append_text(assembled, event->tag());
  assembled += R"(,"data":)";
  append_msgpack_json(assembled, event->data());
  assembled += '}';
  if (want != assembled) report("tree", want, assembled);
  FUZZ_CHECK(want == assembled);
  FUZZ_CHECK(salttap::fuzz::is_linear_size(got, input.size()));
  FUZZ_CHECK(salttap::fuzz::is_strict_json(std::string_view(got).substr(1)));
}

void same_value(std::string_view input, std::size_t offset, const DecodeLimits& limits) {
  msgpack::zone zone;
  msgpack::object tree;
  const TreeResult want = build_tree(zone, input, offset, limits, tree);
  std::string got = "x";
  const TreeResult r = transcode_msgpack_json(input, offset, limits, got);
  FUZZ_CHECK(r.status == want.status);
  FUZZ_CHECK(r.end == want.end);
  if (r.status != TreeStatus::ok) {
    FUZZ_CHECK(got == "x");
    return;
  }
  std::string rendered = "x";
  append_msgpack_json(rendered, tree);
  if (rendered != got) report("value", rendered, got);
  FUZZ_CHECK(rendered == got);
}

void same_stream(std::string_view input, const DecodeLimits& limits) {
  StreamDecoder decoder(limits);
  std::string want;
  decoder.feed(input, [&](Event&& e) {
    append_event_json(want, e);
    want.push_back('\n');
  });
  decoder.finish();
  StreamTranscoder transcoder(limits);
  std::string got;
  transcoder.feed(input, got);
  transcoder.finish();
  if (want != got) report("stream", want, got);
  FUZZ_CHECK(want == got);
  FUZZ_CHECK(decoder.events().stats().errors == transcoder.events().stats().errors);
  FUZZ_CHECK(decoder.frames().stats().skipped_bytes == transcoder.frames().stats().skipped_bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  for (const DecodeLimits& limits : {DecodeLimits{}, salttap::fuzz::kTinyLimits}) {
    same_event(input, limits, false);
    same_event(input, limits, true);
    same_value(input, 0, limits);
    if (const auto sep = input.find("\n\n"); sep != std::string_view::npos) same_value(input, sep + 2, limits);
    same_stream(input, limits);
  }
  return 0;
}
