#include "tap/event_firer.h"

#include <chrono>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace salttap::tap {
namespace asio = boost::asio;

std::string utc_stamp_now() {
  const auto now = std::chrono::system_clock::now();
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1'000'000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:06d}", std::chrono::floor<std::chrono::seconds>(now), us);
}

std::string encode_pull_frame(std::string_view tag, const msgpack::object& data, Framing framing) {
  if (data.type != msgpack::type::MAP) throw FireError("event data must be a map");
  bool has_stamp = false;
  for (std::uint32_t i = 0; i < data.via.map.size; ++i) {
    const auto& k = data.via.map.ptr[i].key;
    if (k.type == msgpack::type::STR && std::string_view(k.via.str.ptr, k.via.str.size) == "_stamp") has_stamp = true;
  }
  msgpack::sbuffer body;
  body.write(tag.data(), tag.size());
  body.write("\n\n", 2);
  {
    msgpack::packer<msgpack::sbuffer> pk(body);
    pk.pack_map(data.via.map.size + (has_stamp ? 0 : 1));
    for (std::uint32_t i = 0; i < data.via.map.size; ++i) {
      pk.pack(data.via.map.ptr[i].key);
      pk.pack(data.via.map.ptr[i].val);
    }
    if (!has_stamp) {
      pk.pack(std::string_view("_stamp"));
      pk.pack(utc_stamp_now());
    }
  }
  msgpack::sbuffer frame;
  msgpack::packer<msgpack::sbuffer> pk(frame);
  pk.pack_map(2);
  pk.pack(std::string_view("head"));
  pk.pack_map(0);
  pk.pack(std::string_view("body"));
  pk.pack_bin(static_cast<std::uint32_t>(body.size()));
  pk.pack_bin_body(body.data(), static_cast<std::uint32_t>(body.size()));

  std::string out;
  if (framing == Framing::len32) {
    const auto n = static_cast<std::uint32_t>(frame.size());
    const char prefix[4] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                            static_cast<char>(n)};
    out.append(prefix, 4);
  }
  out.append(frame.data(), frame.size());
  return out;
}

EventFirer::EventFirer(Endpoint pull, std::string allowed_prefix)
    : pull_(std::move(pull)), allowed_prefix_(std::move(allowed_prefix)) {
  if (allowed_prefix_.empty()) throw FireError("firing needs a tag prefix");
}

void EventFirer::fire(std::string_view tag, const msgpack::object& data, Framing framing) {
  if (!tag.starts_with(allowed_prefix_))
    throw FireError(fmt::format("refusing to fire '{}': tags must start with '{}'", tag, allowed_prefix_));
  if (framing == Framing::unknown) throw FireError("pull-socket framing unknown");
  write(encode_pull_frame(tag, data, framing));
}

void EventFirer::write(const std::string& frame) {
  asio::generic::stream_protocol::endpoint ep =
      pull_.kind == Endpoint::Kind::tcp
          ? asio::generic::stream_protocol::endpoint(
                asio::ip::tcp::endpoint(asio::ip::make_address(pull_.host), pull_.port))
          : asio::generic::stream_protocol::endpoint(asio::local::stream_protocol::endpoint(pull_.path));
  for (int attempt = 0;; ++attempt) {
    boost::system::error_code ec;
    if (!socket_.is_open()) socket_.connect(ep, ec);
    if (!ec) asio::write(socket_, asio::buffer(frame), ec);
    if (!ec) return;
    close();
    if (attempt > 0) throw FireError(fmt::format("cannot write to {}: {}", pull_.describe(), ec.message()));
  }
}

void EventFirer::close() {
  boost::system::error_code ec;
  socket_.close(ec);
}

}  // namespace salttap::tap
