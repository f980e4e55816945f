#pragma once
// A fake engine or webhook receiver behind http::HttpClient, for tests of
// whatever talks HTTP: every client it hands out shares one script (`respond`)
// and one record of requests, so a factory can give a fresh client to each
// thread (setup, shipper workers) and the test sees them all. A test can wait
// for the n-th request (await_requests), and hold requests in flight until
// it releases them or the client is aborted (HttpClient::abort), to observe
// "an attempt is in progress" as a state rather than guess it from timing.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_client.h"
#include "tests/support/gunzip.h"

namespace salttap::testing {

class FakeHttp {
 public:
  using Respond = std::function<http::HttpResponse(const http::HttpRequest&)>;

  static http::HttpResponse reply(long status, std::string body = "{}") {
    http::HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    r.host = "http://fake";
    if (status == 0) r.error = "http://fake: connection refused";
    return r;
  }

  explicit FakeHttp(Respond respond = [](const http::HttpRequest&) { return reply(200); })
      : state_(std::make_shared<State>()) {
    state_->respond = std::move(respond);
  }

  void set_respond(Respond respond) {
    std::lock_guard lock(state_->mutex);
    state_->respond = std::move(respond);
  }

  std::unique_ptr<http::HttpClient> client() const { return std::make_unique<Client>(state_); }
  std::function<std::unique_ptr<http::HttpClient>()> factory() const {
    return [state = state_] { return std::unique_ptr<http::HttpClient>(std::make_unique<Client>(state)); };
  }

  std::vector<http::HttpRequest> requests() const {
    std::lock_guard lock(state_->mutex);
    return state_->requests;
  }
  // Requests with this method whose path starts with `path`.
  std::size_t count(std::string_view method, std::string_view path) const {
    std::lock_guard lock(state_->mutex);
    std::size_t n = 0;
    for (const auto& r : state_->requests) n += r.method == method && r.path.starts_with(path);
    return n;
  }

  // Blocks until `done()` holds (checked at each request); a test whose
  // requests never come is broken: after `limit` of real time this throws.
  void await(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(60)) const {
    std::unique_lock lock(state_->mutex);
    if (!state_->changed.wait_for(lock, limit, [&] {
          lock.unlock();
          const bool ok = done();
          lock.lock();
          return ok;
        }))
      throw std::runtime_error("FakeHttp: the awaited requests never came");
  }
  void await_requests(std::size_t n) const {
    await([&] { return requests().size() >= n; });
  }

  // While held, send() blocks after recording its request, until release()
  // or abort() of that client (then it answers status 0).
  void hold() {
    std::lock_guard lock(state_->mutex);
    state_->held = true;
  }
  void release() {
    {
      std::lock_guard lock(state_->mutex);
      state_->held = false;
    }
    state_->changed.notify_all();
  }

 private:
  struct State {
    mutable std::mutex mutex;
    mutable std::condition_variable changed;
    Respond respond;
    std::vector<http::HttpRequest> requests;
    bool held = false;
  };

  class Client final : public http::HttpClient {
   public:
    explicit Client(std::shared_ptr<State> state) : state_(std::move(state)) {}
    http::HttpResponse send(const http::HttpRequest& sent) override {
      const http::HttpRequest request = as_received(sent);
      std::unique_lock lock(state_->mutex);
      state_->requests.push_back(request);
      state_->changed.notify_all();
      state_->changed.wait(lock, [&] { return !state_->held || aborted_; });
      if (aborted_) return aborted();
      const Respond respond = state_->respond;
      lock.unlock();
      http::HttpResponse r = respond(request);
      r.bytes_sent = r.status ? request.body.size() : 0;
      return r;
    }
    void abort() override {
      {
        std::lock_guard lock(state_->mutex);
        aborted_ = true;
      }
      state_->changed.notify_all();
    }

   private:
    static http::HttpResponse aborted() {
      http::HttpResponse r = reply(0);
      r.error = "http://fake: aborted: shutting down";
      return r;
    }
    std::shared_ptr<State> state_;
    bool aborted_ = false;  // guarded by state_->mutex
  };

  std::shared_ptr<State> state_;
};

}  // namespace salttap::testing
