#pragma once
// A real HTTP/1.1 server on 127.0.0.1 (free port) for webhook tests: records
// every request body and answers with the next status from a script.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace salttap::testing {

class HttpReceiver {
 public:
  explicit HttpReceiver(std::vector<int> statuses) : statuses_(std::move(statuses)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 16);
    thread_ = std::thread([this] { serve(); });
  }
  ~HttpReceiver() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  std::vector<std::string> bodies() const {
    std::lock_guard lock(mutex_);
    return bodies_;
  }

 private:
  void serve() {
    while (!stop_) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req;
      char buf[8192];
      std::size_t body_at = std::string::npos, length = 0;
      while (true) {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        req.append(buf, static_cast<std::size_t>(n));
        if (body_at == std::string::npos && (body_at = req.find("\r\n\r\n")) != std::string::npos) {
          body_at += 4;
          const auto cl = req.find("Content-Length: ");
          if (cl != std::string::npos) length = std::stoul(req.substr(cl + 16));
        }
        if (body_at != std::string::npos && req.size() >= body_at + length) break;
      }
      int status;
      {
        std::lock_guard lock(mutex_);
        if (body_at != std::string::npos) bodies_.push_back(req.substr(body_at, length));
        status = next_ < statuses_.size() ? statuses_[next_++] : 200;
      }
      const std::string resp = "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      ::write(c, resp.data(), resp.size());
      ::close(c);
    }
  }

  std::vector<int> statuses_;
  std::size_t next_ = 0;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> bodies_;
  std::thread thread_;
};

}  // namespace salttap::testing
