#pragma once
// Where the master's event bus is (docs/salt-event-bus.md §2).

#include <cstdint>
#include <string>

namespace salttap::tap {

struct Endpoint {
  enum class Kind { unix_socket, tcp, zmq };
  Kind kind = Kind::unix_socket;
  std::string path;  // unix_socket: socket path; zmq: the full endpoint ("ipc://..." or "tcp://...")
  std::string host;  // tcp
  std::uint16_t port = 0;

  static Endpoint unix_socket(std::string path) { return {Kind::unix_socket, std::move(path), {}, 0}; }
  static Endpoint tcp(std::string host, std::uint16_t port) { return {Kind::tcp, {}, std::move(host), port}; }
  static Endpoint zmq(std::string endpoint) { return {Kind::zmq, std::move(endpoint), {}, 0}; }

  std::string describe() const {
    switch (kind) {
      case Kind::unix_socket:
        return "unix:" + path;
      case Kind::tcp:
        return "tcp:" + host + ":" + std::to_string(port);
      case Kind::zmq:
        return "zmq:" + path;
    }
    return {};
  }
};

}  // namespace salttap::tap
