#include "alerting/dedupe_alert_outlet.h"

#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/json_writer.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "http/url_escape.h"

#ifndef SALTTAP_VERSION
#define SALTTAP_VERSION "dev"
#endif

namespace salttap::alerting {
namespace {

bool about_a_job(const correlator::Alert& a) {
  using correlator::AlertKind;
  return !a.jid.empty() && (a.kind == AlertKind::failed || a.kind == AlertKind::missing || a.kind == AlertKind::risky ||
                            a.kind == AlertKind::evicted);
}

}  // namespace

bool DedupeConfig::operator==(const DedupeConfig& o) const {
  const auto key = [](const DedupeConfig& c) {
    return std::tie(c.http.hosts, c.http.tls, c.http.auth.username, c.http.auth.password, c.http.auth.api_key,
                    c.layout.prefix, c.layout.index_date, c.fleet, c.master, c.timeout, c.orphan_delay);
  };
  return key(*this) == key(o);
}

std::string claim_id(const correlator::Alert& alert, std::string_view fleet) {
  if (!about_a_job(alert)) return {};
  // One alert per job, whichever kinds each master found (the publisher may
  // see a missing minion that another master never expected).
  return fmt::format("{}/job/{}", fleet, alert.jid);
}

http::HttpRequest claim_request(const correlator::Alert& alert, const DedupeConfig& config) {
  http::HttpRequest r;
  r.method = "PUT";
  r.path = "/" + config.layout.index_name("alerts", indexer::job_index_time(alert.jid, alert.started_at)) +
           "/_create/" + http::escape_path_segment(claim_id(alert, config.fleet));
  json::StringOut os{r.body};
  json::Writer w(os);
  w.StartObject();
  json::key(w, "@timestamp"), json::string(w, format_utc(alert.settled_at));
  json::key(w, "master"), json::string(w, config.master);
  json::key(w, "fleet"), json::string(w, config.fleet);
  json::key(w, "salttap");
  w.StartObject();
  json::key(w, "doc"), json::string(w, "alert_claims");
  json::key(w, "version"), json::string(w, SALTTAP_VERSION);
  w.EndObject();
  // Not `jid` or `alert`: searches and dashboards of alerts must not count a claim as one.
  json::key(w, "claim");
  w.StartObject();
  json::key(w, "key"), json::string(w, alert.jid);
  json::key(w, "alert"), json::string(w, correlator::to_string(alert.kind));
  w.EndObject();
  w.EndObject();
  return r;
}

ClaimResult claim_result(const http::HttpResponse& response) {
  if (response.status == 201) return ClaimResult::claimed;
  if (response.status == 409) return ClaimResult::duplicate;
  return ClaimResult::failed;
}

DedupeAlertOutlet::DedupeAlertOutlet(std::vector<std::shared_ptr<AlertOutlet>> inner,
                                     std::unique_ptr<http::HttpClient> http, DedupeConfig config, SteadyTime& time)
    : inner_(std::move(inner)), http_(std::move(http)), config_(std::move(config)), time_(time) {
  thread_ = std::thread([this] {
    name_this_thread("alert-dedupe");
    run();
  });
}

DedupeAlertOutlet::~DedupeAlertOutlet() { stop(std::chrono::milliseconds(0)); }

void DedupeAlertOutlet::send(const correlator::Alert& alert) {
  {
    std::lock_guard lock(mutex_);
    const bool wait = alert.orphan && about_a_job(alert);
    queue_.emplace(time_.now() + (wait ? config_.orphan_delay : std::chrono::milliseconds(0)), alert);
  }
  wake_.notify_all();
}

void DedupeAlertOutlet::stop(std::chrono::milliseconds timeout) {
  std::lock_guard one_stop(stop_mutex_);
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      stopping_ = true;
      stop_deadline_ = time_.now() + timeout;
    }
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DedupeAlertOutlet::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (queue_.empty()) {
      if (stopping_) return;
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      continue;
    }
    const auto ready = queue_.begin()->first;
    // A stop cuts the waits short; new alerts may come first.
    if (!stopping_ && time_.now() < ready) {
      const std::size_t queued = queue_.size();
      time_.wait_until(lock, wake_, ready, [&] { return stopping_ || queue_.size() != queued; });
      continue;
    }
    correlator::Alert alert = std::move(queue_.begin()->second);
    queue_.erase(queue_.begin());
    const bool claim = !stopping_ || time_.now() < stop_deadline_;
    lock.unlock();
    deliver(alert, claim);
    lock.lock();
  }
}

void DedupeAlertOutlet::deliver(const correlator::Alert& alert, bool claim) {
  const std::string id = claim_id(alert, config_.fleet);
  if (id.empty()) {
    ++stats_.passed;
  } else if (!claim) {
    ++stats_.failed_open;
    log::warn("alert dedupe: stopping; the alert of job {} is delivered without asking the engine", alert.jid);
  } else {
    const http::HttpResponse r = http_->send(claim_request(alert, config_));
    switch (claim_result(r)) {
      case ClaimResult::claimed:
        ++stats_.claimed;
        log::debug("alert dedupe: claimed {} in the engine; delivering", id);
        break;
      case ClaimResult::duplicate:
        ++stats_.duplicates;
        log::info("alert {} job {}: another salttap of fleet {} delivered it (engine claim {}); not delivered again",
                  to_string(alert.kind), alert.jid, config_.fleet, id);
        return;
      case ClaimResult::failed:
        ++stats_.failed_open;
        log::warn("alert dedupe: cannot claim {} in the engine ({}); delivering anyway", id,
                  r.status == 0 ? r.error : fmt::format("HTTP {}: {}", r.status, r.body.substr(0, 200)));
        break;
    }
  }
  for (const auto& outlet : inner_) outlet->send(alert);
}

}  // namespace salttap::alerting
