#pragma once
// A correlator under test, on a manual clock: started with the default audit
// rules and redaction, fed events built from JSON (a job's `new` and each
// `ret` in one call), time moved in seconds after kT0.

#include <memory>
#include <string>
#include <utility>

#include "common/clock.h"
#include "correlator/audit.h"
#include "correlator/correlator.h"
#include "correlator/redactor.h"
#include "tests/support/events.h"

namespace salttap::testing {

struct CorrelatorDriver {
  static constexpr Micros kT0 = 1'800'000'000 * kMicrosPerSecond;

  ManualClock clock{kT0};
  std::unique_ptr<correlator::Correlator> corr;

  // A new correlator on `clock`, in place of any before.
  void start(correlator::CorrelatorConfig config, correlator::Correlator::Sink sink) {
    corr = std::make_unique<correlator::Correlator>(
        std::move(config), clock, std::move(sink),
        std::make_shared<correlator::Auditor>(correlator::Auditor::default_rules()),
        std::make_shared<correlator::Redactor>());
  }
  void at(Micros seconds_after_t0) {
    clock.set(kT0 + seconds_after_t0 * kMicrosPerSecond);
    corr->advance();
  }
  void feed(const std::string& tag, const std::string& data) { corr->on_event(ev(tag, data)); }
  void new_job(const std::string& jid, const std::string& fun, const std::string& minions,
               const std::string& arg = "[]", const std::string& more = "") {
    corr->on_event(new_job_event(jid, fun, minions, arg, more));
  }
  void ret(const std::string& jid, const std::string& minion, const std::string& body = kReturnedTrue,
           const std::string& fun = "test.ping") {
    corr->on_event(return_event(jid, minion, body, fun));
  }
};

}  // namespace salttap::testing
