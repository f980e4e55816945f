#pragma once
// What one HTTP listener (`salttap ui`'s, `run`'s and `watch`'s metrics
// listener) grants a client: how long it may take to send a request, how long
// an idle keep-alive connection is kept, how long a whole request may last,
// how many connections it may hold at once and how large a request may be.
// Config `listener:` (config/config.h); reference: docs/ui.md#limits.
//
// The file handles the listener may take are bounded: its connections, the
// acceptor, and one being turned away with a 503. fd_budget() says how many
// connections RLIMIT_NOFILE leaves it once the rest of salttap (spool,
// journal, shipper and engine connections, the bus) has its reserve;
// fit_to_fd_budget() clamps a cap that would eat into that reserve.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace salttap {

struct ListenerLimits {
  // From accepting a connection until its first request's header is whole.
  std::chrono::milliseconds header_timeout{10'000};
  // A keep-alive connection between two requests: until the next header is whole.
  std::chrono::milliseconds idle_timeout{30'000};
  // From a request's header being whole until its answer is written.
  std::chrono::milliseconds request_timeout{60'000};
  // Connections held at once; one more is answered 503 and closed.
  std::size_t max_connections = 64;
  // The request line and header fields together: beyond, 431 (or 414 when the
  // request line alone is too long).
  std::size_t max_header_bytes = std::size_t{16} * 1024;
  // The request target (path and query): beyond, 414.
  std::size_t max_target_bytes = std::size_t{8} * 1024;
  // Host names a browser may address the job browser by, besides the listen
  // address, localhost and IP literals (web/host_check.h).
  std::vector<std::string> allowed_hosts;
};

// File handles the rest of salttap keeps for itself whatever the listener
// does: spool and journal segments, the shipper's and index setup's engine
// connections, the job browser's engine clients, the bus, logs and libraries.
inline constexpr std::uint64_t kReservedFileHandles = 256;
// Besides its connections the listener holds its acceptor and, for an instant,
// one connection it turns away.
inline constexpr std::uint64_t kListenerOwnHandles = 2;

// The most connections the listener may hold when the process may open
// `nofile` file handles: half of what the reserve leaves (the other half is
// the margin for engine connections and spool segments that grow with load).
// 0 when the reserve alone does not fit.
std::uint64_t fd_budget(std::uint64_t nofile);

// The soft RLIMIT_NOFILE of this process.
std::uint64_t current_nofile_limit();

// `limits` with max_connections at most fd_budget(nofile); `warning` says what
// was clamped (empty when nothing was). nullopt when not even one connection
// fits: the listener must not start.
std::optional<ListenerLimits> fit_to_fd_budget(ListenerLimits limits, std::uint64_t nofile, std::string& warning);

}  // namespace salttap
