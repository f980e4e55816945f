// libFuzzer target: one frame / one event body / one JSON line.
//
// The same input is given to
//   EventDecoder::decode_frame   (a {"head","body"} frame from FrameDecoder)
//   EventDecoder::decode_body    (a bare body: ZeroMQ message on Salt 2015.x)
// with production limits and with tiny ones, every decoded event rendered by
// append_event_json / append_msgpack_json(_pretty) and checked to be strict
// JSON; and to the JSON-lines parsers event_body_from_json / msgpack_from_json.
//
// Differential: build_tree (the decoder's own msgpack parser) must accept
// exactly what msgpack::unpack accepts, with the same limits, and build the
// same tree (bit-equal floats, same end offset).
//
// Round trip: the JSON salttap prints for an event, read back by
// event_body_from_json (what `salttap replay` of a .jsonl does) and decoded
// again, must reach a fixed point after one trip (the first trip may change
// what JSON cannot carry: ext types, non-string keys, invalid UTF-8).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "tap/event_from_json.h"
#include "tap/event_to_json.h"
#include "tap/internal/event_decoder.h"
#include "tap/msgpack_tree.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/tiny_limits.h"

namespace {

using namespace salttap::tap;
using salttap::fuzz::is_strict_json;

std::string render(const Event& e) {
  std::string json;
  append_event_json(json, e);
  FUZZ_CHECK(salttap::fuzz::is_linear_size(json, e.wire_bytes()));
  FUZZ_CHECK(is_strict_json(json));
  return json;
}

void render_all_forms(const Event& e) {
  render(e);
  std::string compact;
  append_msgpack_json(compact, e.data());
  FUZZ_CHECK(is_strict_json(compact));
  std::string pretty;
  append_msgpack_json_pretty(pretty, e.data());
  FUZZ_CHECK(is_strict_json(pretty));
}

void check_failure(const EventDecoder& d, std::uint64_t errors_before) {
  FUZZ_CHECK(d.stats().total_errors() == errors_before + 1);
  FUZZ_CHECK(!d.last_error().empty());
}

// JSON line -> body -> Event -> JSON line, as `salttap replay` would.
// `tag`: the tag of the event the line was printed from.
std::optional<std::string> json_trip(const std::string& line, std::string_view tag, EventDecoder& d) {
  std::string error;
  auto body = event_body_from_json(line, &error);
  if (!body) {
    // salttap's own output must always read back, but for a pre-2015.5
    // padded tag ending in "\n", which a body with the separator cannot carry.
    FUZZ_CHECK(!tag.empty() && tag.back() == '\n');
    return std::nullopt;
  }
  auto e = d.decode_body(*body);
  if (!e) {
    // Ext 79 constants become nested JSON, so the data may now be deeper
    // than max_depth; nothing else may fail.
    FUZZ_CHECK(d.last_error().rfind("over_limit", 0) == 0);
    return std::nullopt;
  }
  return render(*e);
}

void round_trip(const Event& e) {
  EventDecoder d;
  const std::string first = render(e);
  auto second = json_trip(first, e.tag(), d);
  if (!second) return;
  auto third = json_trip(*second, {}, d);  // read back once, it always reads back
  if (!third) return;
  if (*second != *third) {
    std::fprintf(stderr, "round trip is not a fixed point:\n  %s\n  %s\n", second->c_str(), third->c_str());
  }
  FUZZ_CHECK(*second == *third);
}

bool same_tree(const msgpack::object& a, const msgpack::object& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case msgpack::type::NIL:
      return true;
    case msgpack::type::BOOLEAN:
      return a.via.boolean == b.via.boolean;
    case msgpack::type::POSITIVE_INTEGER:
      return a.via.u64 == b.via.u64;
    case msgpack::type::NEGATIVE_INTEGER:
      return a.via.i64 == b.via.i64;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return std::memcmp(&a.via.f64, &b.via.f64, sizeof(double)) == 0;
    case msgpack::type::STR:
    case msgpack::type::BIN:
      // msgpack-c leaves ptr null for an empty str/bin: compare as views.
      return std::string_view(a.via.str.ptr, a.via.str.size) == std::string_view(b.via.str.ptr, b.via.str.size);
    case msgpack::type::EXT:
      return a.via.ext.size == b.via.ext.size && std::memcmp(a.via.ext.ptr, b.via.ext.ptr, a.via.ext.size + 1) == 0;
    case msgpack::type::ARRAY:
      if (a.via.array.size != b.via.array.size) return false;
      for (std::uint32_t i = 0; i < a.via.array.size; ++i)
        if (!same_tree(a.via.array.ptr[i], b.via.array.ptr[i])) return false;
      return true;
    case msgpack::type::MAP:
      if (a.via.map.size != b.via.map.size) return false;
      for (std::uint32_t i = 0; i < a.via.map.size; ++i)
        if (!same_tree(a.via.map.ptr[i].key, b.via.map.ptr[i].key) ||
            !same_tree(a.via.map.ptr[i].val, b.via.map.ptr[i].val))
          return false;
      return true;
  }
  return false;
}

void differential_tree(std::string_view bytes, std::size_t offset, const DecodeLimits& limits) {
  msgpack::zone zone;
  msgpack::object ours;
  const TreeResult r = build_tree(zone, bytes, offset, limits, ours);
  FUZZ_CHECK(r.end >= offset && r.end <= bytes.size());

  std::size_t off = offset;
  std::optional<msgpack::object_handle> theirs;
  bool their_over_limit = false;
  try {
    const msgpack::unpack_limit l(limits.max_container_items, limits.max_container_items, 0xffffffff, 0xffffffff,
                                  0xffffffff, limits.max_depth);
    theirs = msgpack::unpack(bytes.data(), bytes.size(), off, nullptr, nullptr, l);
  } catch (const msgpack::size_overflow&) {
    their_over_limit = true;
  } catch (const std::exception&) {
  }
  if ((r.status == TreeStatus::ok) != theirs.has_value()) {
    std::fprintf(stderr, "build_tree status %d at %zu, msgpack::unpack %s\n", static_cast<int>(r.status), r.end,
                 theirs             ? "ok"
                 : their_over_limit ? "over limit"
                                    : "failed");
  }
  FUZZ_CHECK((r.status == TreeStatus::ok) == theirs.has_value());
  if (!theirs) return;
  FUZZ_CHECK(r.end == off);
  FUZZ_CHECK(same_tree(ours, theirs->get()));
}

// One decode of `input`, its heap growth held linear in the input.
template <typename Decode>
std::optional<Event> decode_linear(std::string_view input, const char* what, Decode decode) {
  salttap::fuzz::HeapPeak heap;
  std::optional<Event> e = decode();
  FUZZ_CHECK(salttap::fuzz::is_linear_heap(heap.growth(), input.size(), what));
  return e;
}

void decode_as_frame_and_body(std::string_view input, const DecodeLimits& limits, bool trip) {
  EventDecoder d(limits);
  const auto accepted = [trip](const Event& e) {
    render_all_forms(e);
    if (trip) round_trip(e);
  };
  std::uint64_t errors = d.stats().total_errors();
  if (const auto e = decode_linear(input, "decode_frame", [&] { return d.decode_frame(input); })) {
    FUZZ_CHECK(e->wire_bytes() == input.size());
    FUZZ_CHECK(d.stats().events == 1);
    accepted(*e);
  } else {
    check_failure(d, errors);
  }
  errors = d.stats().total_errors();
  const std::uint64_t events = d.stats().events;
  if (const auto e = decode_linear(input, "decode_body", [&] { return d.decode_body(input); })) {
    FUZZ_CHECK(e->wire_bytes() == input.size());
    FUZZ_CHECK(d.stats().events == events + 1);
    // The tag is a prefix of the body (up to 20 chars on pre-2015.5 masters).
    FUZZ_CHECK(input.substr(0, e->tag().size()) == e->tag());
    accepted(*e);
  } else {
    check_failure(d, errors);
  }
}

void parse_as_json(std::string_view input) {
  std::string error;
  if (auto packed = msgpack_from_json(input, &error)) {
    // Whatever JSON gives must be one whole msgpack value.
    msgpack::object_handle h = msgpack::unpack(packed->data(), packed->size());
    std::string json;
    append_msgpack_json(json, h.get());
    FUZZ_CHECK(is_strict_json(json));
  } else {
    FUZZ_CHECK(!error.empty());
  }

  error.clear();
  if (auto body = event_body_from_json(input, &error)) {
    const auto sep = body->find("\n\n");
    FUZZ_CHECK(sep != std::string::npos);
    EventDecoder d;
    auto e = d.decode_body(*body);
    // A tag without "\n" cannot be split wrongly: the event must come back
    // with the same tag (or hit a depth/size limit).
    const std::string_view tag(body->data(), sep);
    if (tag.find('\n') == std::string_view::npos) {
      if (e) {
        FUZZ_CHECK(e->tag() == tag);
      } else {
        FUZZ_CHECK(d.last_error().rfind("over_limit", 0) == 0);
      }
    }
    if (e) render_all_forms(*e);
  } else {
    FUZZ_CHECK(!error.empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  differential_tree(input, 0, salttap::fuzz::kTinyLimits);
  {
    // Production depth; msgpack-c allocates a container's count up front, so
    // cap the count at the input size (no valid tree has more items anyway).
    DecodeLimits l;
    l.max_container_items = static_cast<std::uint32_t>(std::min<std::size_t>(l.max_container_items, size));
    differential_tree(input, 0, l);
  }
  if (const auto sep = input.find("\n\n"); sep != std::string_view::npos)
    differential_tree(input, sep + 2, salttap::fuzz::kTinyLimits);
  decode_as_frame_and_body(input, DecodeLimits{}, true);
  decode_as_frame_and_body(input, salttap::fuzz::kTinyLimits, false);
  parse_as_json(input);
  return 0;
}
