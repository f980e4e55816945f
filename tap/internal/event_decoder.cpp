#include "tap/internal/event_decoder.h"

#include <cstring>
#include <exception>

#include "common/enum_names.h"
#include "tap/internal/json_transcoder.h"
#include "tap/msgpack_tree.h"

namespace salttap::tap {
namespace {

constexpr std::string_view kTagEnd = "\n\n";
constexpr std::size_t kOldTagLen = 20;  // pre-2015.5 padded tags

// The zone's first chunk holds the frame copy and, usually, the whole tree.
std::size_t zone_chunk_for(std::size_t frame_size) { return frame_size * 2 + 512; }

}  // namespace

std::string_view to_string(DecodeError e) {
  if (e == DecodeError::count_) return "unknown";  // the number of reasons, not one of them
  return enumerator_name(e, "unknown");
}

std::uint64_t DecodeStats::total_errors() const {
  std::uint64_t n = 0;
  for (auto e : errors) n += e;
  return n;
}

EventDecoder::EventDecoder(const DecodeLimits& limits) : limits_(limits) {}

std::nullopt_t EventDecoder::fail_tree(TreeStatus status, DecodeError parse_error, std::size_t at) {
  if (status == TreeStatus::over_limit) return fail(DecodeError::over_limit, "at byte " + std::to_string(at));
  return fail(parse_error,
              (status == TreeStatus::truncated ? "truncated at byte " : "invalid byte at ") + std::to_string(at));
}

std::nullopt_t EventDecoder::fail(DecodeError e, std::string_view detail) {
  ++stats_.errors[static_cast<std::size_t>(e)];
  last_error_.assign(to_string(e));
  if (!detail.empty()) {
    last_error_ += ": ";
    last_error_ += detail;
  }
  return std::nullopt;
}

std::optional<Event> EventDecoder::decode_frame(std::string_view frame) {
  try {
    return decode_frame_unguarded(frame);
  } catch (const std::bad_alloc&) {  // a frame within the limits may still be too much for this host
    return fail(DecodeError::over_limit, "out of memory");
  }
}

std::optional<Event> EventDecoder::decode_body(std::string_view body) {
  try {
    return decode_body_unguarded(body);
  } catch (const std::bad_alloc&) {
    return fail(DecodeError::over_limit, "out of memory");
  }
}

std::optional<Event> EventDecoder::decode_frame_unguarded(std::string_view frame) {
  msgpack::zone zone(zone_chunk_for(frame.size()));
  char* copy = static_cast<char*>(zone.allocate_no_align(frame.size()));
  std::memcpy(copy, frame.data(), frame.size());
  // The tree references the copy, which lives as long as the zone.
  return decode_in_place(zone, copy, frame.size());
}

std::optional<Event> EventDecoder::decode_owned(OwnedFrame&& frame) {
  try {
    msgpack::zone zone(4096);  // the tree only; the bytes stay in frame.buffer
    std::string buffer = std::move(frame.buffer);
    auto event = decode_in_place(zone, buffer.data() + frame.offset, frame.size);
    if (event) event->adopt(std::move(buffer));  // a heap buffer keeps its address when moved
    return event;
  } catch (const std::bad_alloc&) {
    return fail(DecodeError::over_limit, "out of memory");
  }
}

std::optional<Event> EventDecoder::decode_in_place(msgpack::zone& zone, const char* copy, std::size_t size) {
  const std::string_view frame(copy, size);
  msgpack::object outer;
  if (const TreeResult r = build_tree(zone, frame, 0, limits_, outer); r.status != TreeStatus::ok)
    return fail_tree(r.status, DecodeError::frame_not_msgpack, r.end);
  if (outer.type != msgpack::type::MAP) return fail(DecodeError::frame_not_map, {});
  const msgpack::object* body = map_find(outer, "body");
  if (body == nullptr) return fail(DecodeError::no_body, {});
  auto bytes = as_string(*body);
  if (!bytes) return fail(DecodeError::body_not_bytes, {});
  return finish_event(zone, bytes->data(), bytes->size(), frame.size());
}

std::optional<Event> EventDecoder::decode_body_unguarded(std::string_view body) {
  msgpack::zone zone(zone_chunk_for(body.size()));
  char* copy = static_cast<char*>(zone.allocate_no_align(body.size()));
  std::memcpy(copy, body.data(), body.size());
  return finish_event(zone, copy, body.size(), body.size());
}

bool EventDecoder::split_tag(std::string_view all, std::string_view& tag, std::size_t& data_off) {
  if (auto sep = all.find(kTagEnd); sep != std::string_view::npos) {
    tag = all.substr(0, sep);
    data_off = sep + kTagEnd.size();
  } else if (all.size() > kOldTagLen && static_cast<unsigned char>(all[kOldTagLen]) >= 0x80) {
    // Salt <= 2014.7: the tag is padded with '|' to 20 chars, no separator.
    tag = all.substr(0, kOldTagLen);
    while (!tag.empty() && tag.back() == '|') tag.remove_suffix(1);
    data_off = kOldTagLen;
  } else {
    fail(DecodeError::no_separator, {});
    return false;
  }
  return true;
}

std::optional<Event> EventDecoder::finish_event(msgpack::zone& zone, const char* body, std::size_t size,
                                                std::size_t wire_bytes) {
  const std::string_view all(body, size);
  std::string_view tag;
  std::size_t data_off = 0;
  if (!split_tag(all, tag, data_off)) return std::nullopt;

  msgpack::object data;
  if (const TreeResult r = build_tree(zone, all, data_off, limits_, data); r.status != TreeStatus::ok)
    return fail_tree(r.status, DecodeError::data_not_msgpack, r.end);
  ++stats_.events;
  return Event(std::move(zone), tag, data, wire_bytes);
}

bool EventDecoder::transcode_data(std::string_view body, std::string& out) {
  std::string_view tag;
  std::size_t data_off = 0;
  if (!split_tag(body, tag, data_off)) return false;
  if (const TreeResult r = transcode_event_json(tag, body, data_off, limits_, out); r.status != TreeStatus::ok) {
    fail_tree(r.status, DecodeError::data_not_msgpack, r.end);
    return false;
  }
  ++stats_.events;
  return true;
}

bool EventDecoder::transcode_frame(std::string_view frame, std::string& out) {
  const std::size_t mark = out.size();
  try {
    // Only the outer {"head","body"} map becomes a tree, in a zone kept
    // from frame to frame; the data is transcoded from the body's bytes.
    scratch_.clear();
    msgpack::object outer;
    if (const TreeResult r = build_tree(scratch_, frame, 0, limits_, outer); r.status != TreeStatus::ok) {
      fail_tree(r.status, DecodeError::frame_not_msgpack, r.end);
      return false;
    }
    if (outer.type != msgpack::type::MAP) {
      fail(DecodeError::frame_not_map, {});
      return false;
    }
    const msgpack::object* body = map_find(outer, "body");
    if (body == nullptr) {
      fail(DecodeError::no_body, {});
      return false;
    }
    auto bytes = as_string(*body);
    if (!bytes) {
      fail(DecodeError::body_not_bytes, {});
      return false;
    }
    return transcode_data(*bytes, out);
  } catch (const std::bad_alloc&) {
    out.resize(mark);
    fail(DecodeError::over_limit, "out of memory");
    return false;
  }
}

bool EventDecoder::transcode_body(std::string_view body, std::string& out) {
  const std::size_t mark = out.size();
  try {
    return transcode_data(body, out);
  } catch (const std::bad_alloc&) {
    out.resize(mark);
    fail(DecodeError::over_limit, "out of memory");
    return false;
  }
}

}  // namespace salttap::tap
