#pragma once
// Alerts as events on the master bus, for reactors: tag
// salttap/alert/<kind>/<jid> (salttap/alert/<kind> for alerts about no job),
// the alert's JSON payload as data, written to the master's pull socket
// (tap/event_firer.h). Opt-in. The pull socket's framing is probed (against
// the pub socket) before the first alert unless given.

#include "alerting/async_alert_outlet.h"
#include "tap/endpoint.h"
#include "tap/framing.h"

namespace salttap::alerting {

class FireAlertOutlet final : public AsyncAlertOutlet {
 public:
  FireAlertOutlet(tap::Endpoint pub, tap::Endpoint pull, tap::Framing pull_framing = tap::Framing::unknown,
                  RetryPolicy retry = {}, SteadyTime& time = real_steady_time(),
                  UnitRandom random = system_unit_random());
  ~FireAlertOutlet() override;

 private:
  std::string deliver(const correlator::Alert& alert) override;
  tap::Endpoint pub_, pull_;
  tap::Framing framing_;
};

}  // namespace salttap::alerting
