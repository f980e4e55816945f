#pragma once
// A stand-in for the master's pub socket in unit tests: a real listening
// Unix (or TCP loopback) socket that writes whatever bytes the test hands
// it to every connected subscriber, and can be "restarted" (close, unlink,
// re-bind) like a master restart.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"  // its tests bind their sockets in one

namespace salttap::testing {

class FakePublisher {
 public:
  // Unix socket at `path`, or TCP on 127.0.0.1 with a free port when path is empty.
  explicit FakePublisher(std::string path = {}) : path_(std::move(path)) { bind_and_listen(); }
  ~FakePublisher() { close_all(); }

  std::uint16_t port() const { return port_; }
  const std::string& path() const { return path_; }

  // Blocks until `n` subscribers are connected; a minute without them is a
  // broken test (it throws rather than hang the suite).
  void wait_for_subscribers(std::size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      accept_pending();
      if (clients_.size() >= n) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    throw std::runtime_error("no subscriber connected");
  }

  void publish(const std::string& bytes) {
    for (int fd : clients_) {
      std::size_t off = 0;
      while (off < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
        if (n <= 0) break;
        off += static_cast<std::size_t>(n);
      }
    }
  }

  // Like a master restart: every connection closes and the socket is re-bound.
  void restart() {
    close_all();
    bind_and_listen();
  }
  // The listening socket goes first, as when a master dies: a subscriber that
  // reconnects at once on its EOF finds no socket, not the old one about to close.
  void close_all() {
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
    if (!path_.empty()) ::unlink(path_.c_str());
    for (int fd : clients_) ::close(fd);
    clients_.clear();
  }

 private:
  void bind_and_listen() {
    if (!path_.empty()) {
      listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path_.c_str());
      ::unlink(path_.c_str());
      if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("bind unix");
    } else {
      listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      int one = 1;
      ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(port_);  // 0 the first time: a free port; then the same one
      if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("bind tcp");
      socklen_t len = sizeof a;
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
      port_ = ntohs(a.sin_port);
    }
    if (::listen(listen_fd_, 16) != 0) throw std::runtime_error("listen");
  }
  void accept_pending() {
    for (;;) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      clients_.push_back(fd);
    }
  }

  std::string path_;
  std::uint16_t port_ = 0;
  int listen_fd_ = -1;
  std::vector<int> clients_;
};

}  // namespace salttap::testing
