#pragma once
// EventFirer writes events into master_event_pull.ipc (or the TCP pull port)
// so reactors can act on salttap's alerts (docs/salt-event-bus.md §5).
//
// Write access to the pull socket is root-equivalent on the fleet (reactors,
// and 3007+ republishes salt/job/*/publish to minions), so firing is off by
// default and every tag must start with salttap's own prefix.

#include <stdexcept>
#include <string>
#include <string_view>

#include <msgpack.hpp>
#include "common/asio.h"

#include "tap/endpoint.h"
#include "tap/framing.h"

namespace salttap::tap {

struct FireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr std::string_view kFireTagPrefix = "salttap/";

// datetime.utcnow().isoformat(), as Salt stamps events.
std::string utc_stamp_now();

// One pull-socket frame: [u32 BE length] + msgpack {"head": {}, "body": bin(tag "\n\n" data)}.
// `data` must be a map; `_stamp` is added when absent.
std::string encode_pull_frame(std::string_view tag, const msgpack::object& data, Framing framing);

class EventFirer {
 public:
  explicit EventFirer(Endpoint pull, std::string allowed_prefix = std::string(kFireTagPrefix));

  // Throws FireError when the tag is outside the allowed prefix, the data is
  // not a map, or the write fails (after one reconnect).
  void fire(std::string_view tag, const msgpack::object& data, Framing framing);
  void close();

 private:
  void write(const std::string& frame);

  Endpoint pull_;
  std::string allowed_prefix_;
  boost::asio::io_context io_;
  boost::asio::generic::stream_protocol::socket socket_{io_};
};

}  // namespace salttap::tap
