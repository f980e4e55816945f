#include "common/listener_limits.h"

#include <sys/resource.h>

#include <fmt/format.h>

namespace salttap {

std::uint64_t fd_budget(std::uint64_t nofile) {
  if (nofile <= kReservedFileHandles + kListenerOwnHandles) return 0;
  return (nofile - kReservedFileHandles - kListenerOwnHandles) / 2;
}

std::uint64_t current_nofile_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX / 4;
  return limit.rlim_cur;
}

std::optional<ListenerLimits> fit_to_fd_budget(ListenerLimits limits, std::uint64_t nofile, std::string& warning) {
  warning.clear();
  const std::uint64_t budget = fd_budget(nofile);
  if (budget == 0) {
    warning = fmt::format(
        "RLIMIT_NOFILE is {}: salttap keeps {} file handles for the spool, the shipper and the bus, which leaves "
        "none for the listener; raise LimitNOFILE",
        nofile, kReservedFileHandles);
    return std::nullopt;
  }
  if (limits.max_connections > budget) {
    warning = fmt::format(
        "listener.max_connections {} lowered to {}: RLIMIT_NOFILE is {} and salttap keeps {} file handles for the "
        "spool, the shipper and the bus (raise LimitNOFILE to allow more)",
        limits.max_connections, budget, nofile, kReservedFileHandles);
    limits.max_connections = static_cast<std::size_t>(budget);
  }
  return limits;
}

}  // namespace salttap
