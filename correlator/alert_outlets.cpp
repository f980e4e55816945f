#include "correlator/alert_outlets.h"

#include <curl/curl.h>

#include <random>

#include <fmt/format.h>

#include "common/log.h"
#include "tap/event_firer.h"
#include "tap/json_event.h"
#include "tap/pull_framing_probe.h"

namespace salttap::correlator {

void LogAlertOutlet::send(const Alert& alert) {
  if (alert.jid.empty()) log::warn("alert {}: {}", to_string(alert.kind), alert.json);
  else log::warn("alert {} job {}: {}", to_string(alert.kind), alert.jid, alert.json);
}

AsyncAlertOutlet::AsyncAlertOutlet(std::string name, RetryPolicy policy)
    : name_(std::move(name)), policy_(policy) {}

AsyncAlertOutlet::~AsyncAlertOutlet() { stop(std::chrono::milliseconds(0)); }

void AsyncAlertOutlet::start() { thread_ = std::thread([this] { run(); }); }

void AsyncAlertOutlet::send(const Alert& alert) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= policy_.queue_cap) {
      ++stats_.dropped_queue_full;
      log::error("alert {}: {} queue full ({} alerts); dropped the alert for job {}", name_, name_, queue_.size(),
                 alert.jid);
      return;
    }
    queue_.push_back(alert);
  }
  wake_.notify_one();
}

void AsyncAlertOutlet::stop(std::chrono::milliseconds timeout) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    stop_deadline_ = std::chrono::steady_clock::now() + timeout;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AsyncAlertOutlet::run() {
  thread_local std::minstd_rand rng{std::random_device{}()};
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    Alert alert = std::move(queue_.front());
    queue_.pop_front();
    for (int attempt = 1;; ++attempt) {
      lock.unlock();
      ++stats_.attempts;
      const std::string error = deliver(alert);
      lock.lock();
      if (error.empty()) {
        ++stats_.delivered;
        break;
      }
      const bool out_of_time = stopping_ && std::chrono::steady_clock::now() >= stop_deadline_;
      if (attempt >= policy_.max_attempts || out_of_time) {
        ++stats_.gave_up;
        log::error("alert {}: gave up on job {} after {} attempts: {}", name_, alert.jid, attempt, error);
        break;
      }
      // Capped exponential backoff with full jitter.
      const auto cap = std::min<long long>(policy_.max.count(), policy_.initial.count() << std::min(attempt - 1, 20));
      const auto wait = std::chrono::milliseconds(std::uniform_int_distribution<long long>(0, cap)(rng));
      ++stats_.retries;
      log::warn("alert {}: attempt {} for job {} failed ({}); retrying in {} ms", name_, attempt, alert.jid, error,
                wait.count());
      wake_.wait_for(lock, wait, [&] { return stopping_ && std::chrono::steady_clock::now() >= stop_deadline_; });
    }
  }
}

// ---- webhook ---------------------------------------------------------------

namespace {
std::size_t discard_body(char*, std::size_t size, std::size_t n, void*) { return size * n; }
}  // namespace

WebhookAlertOutlet::WebhookAlertOutlet(WebhookConfig config)
    : AsyncAlertOutlet("webhook", config.retry), config_(std::move(config)) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  start();
}

WebhookAlertOutlet::~WebhookAlertOutlet() { stop(std::chrono::milliseconds(0)); }

std::string WebhookAlertOutlet::deliver(const Alert& alert) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return "curl_easy_init failed";
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  for (const auto& h : config_.headers) headers = curl_slist_append(headers, h.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_URL, config_.url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_POST, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, alert.json.data());
  curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(alert.json.size()));
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(config_.timeout.count()));
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, discard_body);
  const CURLcode rc = curl_easy_perform(curl.get());
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) return curl_easy_strerror(rc);
  if (status < 200 || status > 299) return fmt::format("HTTP {}", status);
  return {};
}

// ---- alert events on the master bus ------------------------------------------

FireAlertOutlet::FireAlertOutlet(tap::Endpoint pub, tap::Endpoint pull, tap::Framing pull_framing, RetryPolicy retry)
    : AsyncAlertOutlet("fire", retry), pub_(std::move(pub)), pull_(std::move(pull)), framing_(pull_framing) {
  start();
}

FireAlertOutlet::~FireAlertOutlet() { stop(std::chrono::milliseconds(0)); }

std::string FireAlertOutlet::deliver(const Alert& alert) {
  if (framing_ == tap::Framing::unknown) {
    framing_ = tap::probe_pull_framing({pub_, pull_});
    if (framing_ == tap::Framing::unknown) return "pull-socket framing unknown (probe not seen on the bus)";
  }
  std::string error;
  auto packed = tap::msgpack_from_json(alert.json, &error);
  if (!packed) return error;
  const msgpack::object_handle data = msgpack::unpack(packed->data(), packed->size());
  try {
    tap::EventFirer firer(pull_);
    const std::string tag = alert.jid.empty() ? fmt::format("{}alert/{}", tap::kFireTagPrefix, to_string(alert.kind))
                                              : fmt::format("{}alert/{}/{}", tap::kFireTagPrefix, to_string(alert.kind), alert.jid);
    firer.fire(tag, data.get(),
               framing_);
  } catch (const tap::FireError& e) {
    return e.what();
  }
  return {};
}

// ---- dispatcher ----------------------------------------------------------------

void AlertDispatcher::on_job(JobUpdate update, const Job& job, const MinionRegistry& minions) {
  if (update != JobUpdate::settled) return;  // one alert per job: late returns do not alert again
  auto alert = make_alert(job, minions, config_, master_id_);
  if (alert) dispatch(*alert);
}

void AlertDispatcher::dispatch(const Alert& alert) {
  for (auto k : alert.kinds) ++counts_[static_cast<std::size_t>(k)];
  for (auto& outlet : outlets_) outlet->send(alert);
}

}  // namespace salttap::correlator
