#pragma once
// A real HTTP/1.1 server on 127.0.0.1 (free port) for webhook and engine
// client tests: records every request (head and body) and answers with the
// next reply from a script (status, body, headers; or held until the test
// releases it). With keep_alive it serves several requests per
// connection and counts connections.

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/loopback_port.h"

namespace salttap::testing {

class HttpReceiver {
 public:
  struct Reply {
    int status = 200;
    std::string body;
    std::vector<std::string> headers;  // "Name: value"
    // No answer until release() or the receiver's end: only a client timeout
    // or abort ends the request, whatever the machine's speed.
    bool hold = false;
  };
  struct Request {
    std::string head;  // request line and headers
    std::string body;
  };

  explicit HttpReceiver(std::vector<int> statuses, bool keep_alive = false) : keep_alive_(keep_alive) {
    for (int s : statuses) replies_.push_back(Reply{s, {}, {}, false});
    listen();
  }
  explicit HttpReceiver(std::vector<Reply> replies, bool keep_alive = false)
      : replies_(std::move(replies)), keep_alive_(keep_alive) {
    listen();
  }
  ~HttpReceiver() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    ::shutdown(socket_.fd(), SHUT_RDWR);  // wakes accept(); the socket closes after the join
    if (const int c = conn_.load(); c >= 0) ::shutdown(c, SHUT_RDWR);
    thread_.join();
  }
  std::uint16_t port() const { return socket_.port(); }
  std::string base_url() const { return socket_.url(); }
  std::string url() const { return base_url() + "/hook"; }
  std::vector<std::string> bodies() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& r : requests_) out.push_back(r.body);
    return out;
  }
  std::vector<Request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  int connections() const { return connections_.load(); }
  // Blocks until `n` requests have arrived; false after `guard` (a broken test).
  bool wait_requests(std::size_t n, std::chrono::seconds guard = std::chrono::seconds(60)) const {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, guard, [&] { return requests_.size() >= n; });
  }
  // Held replies go out.
  void release() {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
    }
    changed_.notify_all();
  }

 private:
  void listen() {
    ::listen(socket_.fd(), 16);
    thread_ = std::thread([this] { serve(); });
  }

  static std::size_t content_length(const std::string& head) {
    std::string lower(head);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    const auto cl = lower.find("\r\ncontent-length:");
    return cl == std::string::npos ? 0 : std::stoul(lower.substr(cl + 17));
  }

  void serve() {
    while (!stop_) {
      const int c = ::accept(socket_.fd(), nullptr, nullptr);
      if (c < 0) return;
      ++connections_;
      conn_ = c;
      std::string buffer;
      bool open = true;
      while (open && !stop_) {
        std::size_t head_end;
        while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos && (open = read_more(c, buffer))) {
        }
        if (!open) break;
        const std::size_t length = content_length(buffer.substr(0, head_end + 2));
        while (buffer.size() < head_end + 4 + length && (open = read_more(c, buffer))) {
        }
        if (!open) break;
        Reply reply;
        {
          std::unique_lock lock(mutex_);
          requests_.push_back({buffer.substr(0, head_end), buffer.substr(head_end + 4, length)});
          reply = next_ < replies_.size() ? replies_[next_++] : Reply{};
          changed_.notify_all();
          if (reply.hold) changed_.wait(lock, [&] { return released_ || stop_; });
        }
        buffer.erase(0, head_end + 4 + length);
        std::string resp = "HTTP/1.1 " + std::to_string(reply.status) +
                           " X\r\nContent-Length: " + std::to_string(reply.body.size()) + "\r\n";
        for (const auto& h : reply.headers) resp += h + "\r\n";
        resp += keep_alive_ ? "\r\n" : "Connection: close\r\n\r\n";
        resp += reply.body;
        ::send(c, resp.data(), resp.size(), MSG_NOSIGNAL);  // the client may have given up
        open = keep_alive_;
      }
      conn_ = -1;
      ::close(c);
    }
  }

  static bool read_more(int c, std::string& buffer) {
    char buf[8192];
    const ssize_t n = ::read(c, buf, sizeof buf);
    if (n <= 0) return false;
    buffer.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  std::vector<Reply> replies_;
  bool keep_alive_ = false;
  std::size_t next_ = 0;
  LoopbackPort socket_;
  std::atomic<bool> stop_{false};
  std::atomic<int> conn_{-1};
  std::atomic<int> connections_{0};
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;  // a request arrived, release(), or the end
  bool released_ = false;
  std::vector<Request> requests_;
  std::thread thread_;
};

}  // namespace salttap::testing
