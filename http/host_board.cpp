#include "http/host_board.h"

#include <algorithm>

namespace salttap::http {

std::string host_display(const std::string& configured) {
  std::string base = configured;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.find("://") == std::string::npos) base = "http://" + base;
  const auto authority = base.find("://") + 3;
  const auto at = base.find('@', authority);
  if (at != std::string::npos && base.find('/', authority) > at) base.erase(authority, at + 1 - authority);
  return base;
}

std::vector<std::string> host_displays(const std::vector<std::string>& configured) {
  std::vector<std::string> out;
  out.reserve(configured.size());
  for (const auto& h : configured) out.push_back(host_display(h));
  if (out.empty()) out.emplace_back("http://127.0.0.1:9200");
  return out;
}

HostBoard::HostBoard(std::vector<std::string> hosts) {
  for (auto& h : hosts) hosts_.push_back({HostState{std::move(h)}, {}});
}

void HostBoard::answered(std::size_t host) {
  const std::lock_guard lock(mutex_);
  if (host >= hosts_.size()) return;
  auto& e = hosts_[host];
  e.state.seen = e.state.up = true;
  ++e.state.answered;
  e.cooldown_until = {};
}

void HostBoard::failed(std::size_t host, Clock::time_point cooldown_until) {
  const std::lock_guard lock(mutex_);
  if (host >= hosts_.size()) return;
  auto& e = hosts_[host];
  e.state.seen = true;
  e.state.up = false;
  ++e.state.failed;
  e.cooldown_until = std::max(e.cooldown_until, cooldown_until);
}

HostBoard::Clock::time_point HostBoard::cooldown_until(std::size_t host) const {
  const std::lock_guard lock(mutex_);
  return host < hosts_.size() ? hosts_[host].cooldown_until : Clock::time_point{};
}

std::vector<HostBoard::HostState> HostBoard::snapshot() const {
  const std::lock_guard lock(mutex_);
  std::vector<HostState> out;
  out.reserve(hosts_.size());
  for (const auto& e : hosts_) out.push_back(e.state);
  return out;
}

std::size_t HostBoard::up() const {
  const std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(
      std::count_if(hosts_.begin(), hosts_.end(), [](const Entry& e) { return e.state.up; }));
}

std::vector<std::size_t> HostBoard::order(std::size_t start, Clock::time_point now) const {
  const std::lock_guard lock(mutex_);
  const std::size_t n = hosts_.size();
  std::vector<std::size_t> out(n);
  for (std::size_t k = 0; k < n; ++k) out[k] = (start + k) % n;
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
    return std::max(hosts_[a].cooldown_until, now) < std::max(hosts_[b].cooldown_until, now);
  });
  return out;
}

std::vector<std::size_t> HostBoard::spread_order(Clock::time_point now) {
  const std::lock_guard lock(mutex_);
  std::vector<std::size_t> healthy, cooling;
  for (std::size_t i = 0; i < hosts_.size(); ++i) (hosts_[i].cooldown_until > now ? cooling : healthy).push_back(i);
  if (!healthy.empty())
    std::rotate(healthy.begin(), healthy.begin() + static_cast<std::ptrdiff_t>(cursor_ % healthy.size()),
                healthy.end());
  ++cursor_;
  std::stable_sort(cooling.begin(), cooling.end(),
                   [&](std::size_t a, std::size_t b) { return hosts_[a].cooldown_until < hosts_[b].cooldown_until; });
  healthy.insert(healthy.end(), cooling.begin(), cooling.end());
  return healthy;
}

}  // namespace salttap::http
